// f32 matmuls take gpu.mma only where the target allows TF32 (+tf32, or
// --allow-tf32): m16n8k8 instructions, K stages of 16 by default (two
// 128x16 f32 tiles are 16 KiB: three buffers fit 48 KiB), 16-byte copies
// of four elements. Without it they stay on CUDA cores (gpu.ffma, then
// gpu.tile).
// RUN: ke-opt sketches %s --target cuda:sm_90+tf32 | FileCheck %s
// RUN: ke-opt sketches %s --target cuda:sm_90 --allow-tf32 | FileCheck %s
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s --check-prefix=IEEE

// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.mma
// CHECK: // knob kblock: 8 [16] 32 64
// CHECK: transform.structured.pad {{.*}}padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32]
// 128x16 f32 tiles over 128 threads, 4 elements a copy: 4 rows each.
// CHECK: tile_sizes [4, 4] (mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>])
// CHECK: transform.apply_patterns.gpu.unroll_vectors_subgroup_mma [16, 8, 8]
// IEEE-LABEL: // -----// workload {{.*}} linalg.matmul
// IEEE-NEXT: // sketch gpu.ffma
func.func @f32(%a: tensor<256x128xf32>, %b: tensor<128x256xf32>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x128xf32>, tensor<128x256xf32>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

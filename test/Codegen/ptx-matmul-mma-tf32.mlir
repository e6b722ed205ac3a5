// An f32 matmul on a +tf32 target: gpu.mma with m16n8k8 TF32 mma.sync
// (8 x 8 per warp tile of 64x64 and K step of 8, two K steps a stage), A
// loaded with ldmatrix (its 32-bit elements as pairs of 16-bit ones), B
// (K x N, needs a transpose ldmatrix cannot do on 32-bit elements) with
// 32-bit shared loads, the copies cp.async. Without +tf32 the same input
// takes CUDA cores: no mma.sync.
// RUN: ke-opt compile %s --target cuda:sm_90+tf32 --emit=asm -o - 2>/dev/null | FileCheck %s
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s --check-prefix=IEEE

// CHECK-NOT: .local
// CHECK: cp.async.cg.shared.global
// CHECK: [[LOOP:\$L__BB[0-9_]+]]:
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ld.shared.b32
// CHECK-COUNT-64: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK: bra{{.*}} [[LOOP]]
// IEEE-NOT: mma.sync
func.func @f32(%a: tensor<256x128xf32>, %b: tensor<128x256xf32>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x128xf32>, tensor<128x256xf32>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

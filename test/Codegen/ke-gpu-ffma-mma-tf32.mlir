// gpu.ffma's mma.sync variant leaves f32 m16n8k8 mma.sync in its kernel;
// ke-gpu-vector-to-mma makes them what the target allows, as it does for
// the ones it converts: 3xTF32 (each a lo*hi, hi*lo and hi*hi product,
// every K tile's sum added to the carried one with a rounded f32 add),
// TF32, or an error.
// RUN: ke-opt %s --ke-gpu-ffma-matmuls --ke-gpu-vector-to-mma="allow-tf32=true tf32x3=true" | FileCheck %s --check-prefix=X3
// RUN: ke-opt %s --ke-gpu-ffma-matmuls --ke-gpu-vector-to-mma="allow-tf32=true" | FileCheck %s --check-prefix=TF32
// RUN: ke-opt %s --ke-gpu-ffma-matmuls --ke-gpu-vector-to-mma --verify-diagnostics -o /dev/null

// X3: scf.for
// X3: arith.andi {{.*}} : vector<4x1xi32>
// X3-COUNT-3: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
// X3: arith.addf {{.*}} : vector<2x2xf32>
// X3: scf.yield
// TF32: scf.for
// TF32-NOT: arith.andi
// TF32: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
// TF32-NOT: arith.addf {{.*}} : vector<2x2xf32>
// TF32: scf.yield
func.func @conv_like(%c: memref<64x64xf32>, %a: memref<64x32xf32>, %b: memref<32x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  // expected-error @+1 {{an f32 contraction on tensor cores runs in TF32, which the target does not allow}}
  linalg.matmul {ke.ffma = {block_m = 32 : i64, block_n = 64 : i64, k_tile = 8 : i64, stages = 2 : i64, group_m = 1 : i64, thread_n = 8 : i64, mma = 1 : i64}}
    ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

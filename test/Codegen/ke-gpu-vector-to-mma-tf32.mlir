// RUN: ke-opt %s --ke-gpu-vector-to-mma="allow-tf32=true" | FileCheck %s
// RUN: ke-opt %s --ke-gpu-vector-to-mma --verify-diagnostics -o /dev/null

// An f32 contraction (m16n8k8) becomes mma.sync in TF32 where the target
// allows it; without allow-tf32 it is an error (TF32 changes an f32
// contraction's numerics), never a silent TF32 kernel.
// CHECK-LABEL: func.func @f32
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-NOT: vector.contract
func.func @f32(%a: memref<16x8xf32>, %b: memref<8x8xf32>, %c: memref<16x8xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %padf = arith.constant 0.0 : f32
    %row = affine.apply affine_map<()[s0] -> ((s0 floordiv 32) * 16)>()[%tx]
    %col = affine.apply affine_map<()[s0] -> ((s0 floordiv 32) * 8)>()[%tx]
    %sa = memref.alloc() : memref<16x16xf32, #gpu.address_space<workgroup>>
    %sb = memref.alloc() : memref<8x128xf32, #gpu.address_space<workgroup>>
    %va = vector.transfer_read %sa[%row, %c0], %padf {in_bounds = [true, true]} : memref<16x16xf32, #gpu.address_space<workgroup>>, vector<16x8xf32>
    %vb = vector.transfer_read %sb[%c0, %col], %padf {in_bounds = [true, true]} : memref<8x128xf32, #gpu.address_space<workgroup>>, vector<8x8xf32>
    %vc = vector.transfer_read %c[%c0, %c0], %padf {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
    // expected-error @+1 {{an f32 contraction on tensor cores runs in TF32, which the target does not allow}}
    %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %vc : vector<16x8xf32>, vector<8x8xf32> into vector<16x8xf32>
    vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    gpu.terminator
  }
  return
}

// RUN: ke-opt %s --ke-gpu-vector-to-mma --ke-gpu-pipeline-stage-copies | FileCheck %s

// A tensor-core stage loop (4 stages of 16) pipelined three deep with
// cp.async: the tiles get three buffers each, the first two stages' copies
// are issued before the loop (one group each), each iteration issues the
// copies of stage k + 2 as one group, waits until at most two groups are
// in flight (stage k's has landed), crosses the barrier and multiplies
// stage k; the barrier between the two copies is gone. The last two stages
// run after the loop, each waiting for every group.
// CHECK-LABEL: func.func @stage_loop
// CHECK: memref.alloc() : memref<3x16x16xf16, #gpu.address_space<workgroup>>
// CHECK: memref.alloc() : memref<3x16x8xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}} : memref<16x64xf16> to memref<16x16xf16, strided<[16, 1], offset: ?>, #gpu.address_space<workgroup>>
// CHECK: %[[G0:.*]] = nvgpu.device_async_create_group
// CHECK: %[[G1:.*]] = nvgpu.device_async_create_group
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %cst{{.*}}, %[[OLDEST:.*]] = %[[G0]], %{{.*}} = %[[G1]],
// CHECK-NOT: gpu.barrier
// CHECK: nvgpu.device_async_copy
// CHECK-NOT: gpu.barrier
// CHECK: nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[OLDEST]] {numGroups = 2 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: nvgpu.mma.sync
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK: nvgpu.mma.sync
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK: nvgpu.mma.sync
// CHECK-NOT: nvgpu.mma.sync
// CHECK: vector.store %{{.*}} : memref<16x8xf32>, vector<2xf32>
func.func @stage_loop(%a: memref<16x64xf16>, %b: memref<64x8xf16>, %c: memref<16x8xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %pad = arith.constant 0.0 : f16
    %padf = arith.constant 0.0 : f32
    %row = affine.apply affine_map<()[s0] -> ((s0 floordiv 32) * 16)>()[%tx]
    %sa = memref.alloc() : memref<16x16xf16, #gpu.address_space<workgroup>>
    %sb = memref.alloc() : memref<16x8xf16, #gpu.address_space<workgroup>>
    %zero = arith.constant dense<0.0> : vector<16x8xf32>
    vector.transfer_write %zero, %c[%row, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    gpu.barrier
    %init = vector.transfer_read %c[%row, %c0], %padf {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
    %acc = scf.for %k = %c0 to %c64 step %c16 iter_args(%sum = %init) -> (vector<16x8xf32>) {
      %ga = vector.transfer_read %a[%c0, %k], %pad {in_bounds = [true, true]} : memref<16x64xf16>, vector<16x16xf16>
      vector.transfer_write %ga, %sa[%c0, %c0] {in_bounds = [true, true]} : vector<16x16xf16>, memref<16x16xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      %gb = vector.transfer_read %b[%k, %c0], %pad {in_bounds = [true, true]} : memref<64x8xf16>, vector<16x8xf16>
      vector.transfer_write %gb, %sb[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf16>, memref<16x8xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      %va = vector.transfer_read %sa[%row, %c0], %pad {in_bounds = [true, true]} : memref<16x16xf16, #gpu.address_space<workgroup>>, vector<16x16xf16>
      %vb = vector.transfer_read %sb[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x8xf16, #gpu.address_space<workgroup>>, vector<16x8xf16>
      %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %sum : vector<16x16xf16>, vector<16x8xf16> into vector<16x8xf32>
      gpu.barrier
      scf.yield %r : vector<16x8xf32>
    }
    vector.transfer_write %acc, %c[%row, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    gpu.terminator
  }
  return
}

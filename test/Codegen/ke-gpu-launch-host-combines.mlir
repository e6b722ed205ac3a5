// RUN: ke-opt %s --ke-gpu-launch-host-combines | FileCheck %s

// The second step of a global sum: the schedule leaves the combine of 512
// block partials on the host. It becomes one block of 256 threads: each
// thread sums partials t and t + 256 in order, the block combines with
// gpu.all_reduce, and thread 0 adds the init (read from the result) and
// stores the result. The deallocation stays on the host.
// CHECK-LABEL: func.func @kernel
// CHECK: %[[PARTIALS:.*]] = memref.alloc() : memref<512xf32>
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks({{.*}}) threads({{.*}}) in (%{{.*}} = %[[THREADS]],
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = memref.load %[[PARTIALS]][%[[TID]]]
// CHECK: %[[MINE:.*]] = scf.for {{.*}} iter_args(%[[SUM:.*]] = %[[FIRST]]) -> (f32)
// CHECK: memref.load %[[PARTIALS]]
// CHECK: arith.addf %[[SUM]]
// CHECK: %[[BLOCK:.*]] = gpu.all_reduce add %[[MINE]] uniform
// CHECK: scf.if
// CHECK: %[[INIT:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK: %[[RESULT:.*]] = arith.addf %[[BLOCK]], %[[INIT]]
// CHECK: memref.store %[[RESULT]]
// CHECK: gpu.terminator
// CHECK-NOT: vector.reduction
// CHECK: memref.dealloc %[[PARTIALS]]
// CHECK-NEXT: return
func.func @kernel(%out: memref<f32>, %in: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %pad = arith.constant 0.0 : f32
  %partials = memref.alloc() : memref<512xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c512, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %in[%bx] : memref<1024xf32>
    memref.store %v, %partials[%bx] : memref<512xf32>
    gpu.terminator
  }
  %p = vector.transfer_read %partials[%c0], %pad {in_bounds = [true]} : memref<512xf32>, vector<512xf32>
  %init = memref.load %out[] : memref<f32>
  %r = vector.reduction <add>, %p, %init : vector<512xf32> into f32
  memref.store %r, %out[] : memref<f32>
  memref.dealloc %partials : memref<512xf32>
  return
}

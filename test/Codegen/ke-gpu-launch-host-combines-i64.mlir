// RUN: ke-opt %s --ke-gpu-launch-host-combines | FileCheck %s

// A global count in i64 (cross-entropy's number of valid targets): the
// combine of 64 block partials cannot use gpu.all_reduce (it shuffles 32-bit
// values), so one thread of one block adds them in order. Before, the combine
// stayed on the host and compiling failed ("the schedule left this op on the
// host").
// CHECK-LABEL: func.func @kernel
// CHECK: %[[PARTIALS:.*]] = memref.alloc() : memref<64xi64>
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: gpu.launch blocks({{.*}}) threads({{.*}}) in (%{{.*}} = %[[ONE]],
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = memref.load %[[PARTIALS]][%[[TID]]]
// CHECK: %[[MINE:.*]] = scf.for {{.*}} iter_args(%[[SUM:.*]] = %[[FIRST]]) -> (i64)
// CHECK: arith.addi %[[SUM]]
// CHECK-NOT: gpu.all_reduce
// CHECK: scf.if
// CHECK: %[[INIT:.*]] = memref.load %{{.*}}[] : memref<i64>
// CHECK: %[[RESULT:.*]] = arith.addi %[[MINE]], %[[INIT]]
// CHECK: memref.store %[[RESULT]]
// CHECK-NOT: vector.reduction
// CHECK: return
func.func @kernel(%out: memref<i64>, %in: memref<1024xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0 : i64
  %partials = memref.alloc() : memref<64xi64>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c64, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %in[%bx] : memref<1024xi64>
    memref.store %v, %partials[%bx] : memref<64xi64>
    gpu.terminator
  }
  %p = vector.transfer_read %partials[%c0], %pad {in_bounds = [true]} : memref<64xi64>, vector<64xi64>
  %init = memref.load %out[] : memref<i64>
  %r = vector.reduction <add>, %p, %init : vector<64xi64> into i64
  memref.store %r, %out[] : memref<i64>
  return
}

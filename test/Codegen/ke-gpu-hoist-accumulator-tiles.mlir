// RUN: ke-opt %s --ke-gpu-hoist-accumulator-tiles --split-input-file | FileCheck %s

// The accumulator tile a stage loop reads and writes every iteration stays
// in registers: read once before the loop, carried as an iter_arg, written
// once after it.
// CHECK-LABEL: func.func @kernel
// CHECK: gpu.launch
// CHECK: %[[INIT:.*]] = vector.transfer_read %{{.*}} : memref<4xf32>, vector<4xf32>
// CHECK: %[[RESULT:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (vector<4xf32>)
// CHECK: vector.transfer_read %{{.*}} : memref<64xf32>, vector<4xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]]
// CHECK: scf.yield %[[SUM]]
// CHECK: vector.transfer_write %[[RESULT]], %{{.*}} : vector<4xf32>, memref<4xf32>
func.func @kernel(%a: memref<64xf32>, %c: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %pad = arith.constant 0.0 : f32
    scf.for %k = %c0 to %c64 step %c4 {
      %acc = vector.transfer_read %c[%c0], %pad {in_bounds = [true]} : memref<4xf32>, vector<4xf32>
      %x = vector.transfer_read %a[%k], %pad {in_bounds = [true]} : memref<64xf32>, vector<4xf32>
      %s = arith.addf %acc, %x : vector<4xf32>
      vector.transfer_write %s, %c[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// Another access to the tile's buffer in the loop keeps the tile in memory.
// CHECK-LABEL: func.func @kernel
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: vector.transfer_read %{{.*}} : memref<4xf32>, vector<4xf32>
// CHECK: memref.store
// CHECK: vector.transfer_write
func.func @kernel(%a: memref<64xf32>, %c: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %pad = arith.constant 0.0 : f32
    scf.for %k = %c0 to %c64 step %c4 {
      %acc = vector.transfer_read %c[%c0], %pad {in_bounds = [true]} : memref<4xf32>, vector<4xf32>
      memref.store %pad, %c[%c3] : memref<4xf32>
      vector.transfer_write %acc, %c[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32>
    }
    gpu.terminator
  }
  return
}

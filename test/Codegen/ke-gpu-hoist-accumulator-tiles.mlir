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

// -----

// A warp's tensor-core accumulators are several tiles of one buffer at
// indices a constant apart (16x8 each): each is carried on its own, as the
// others provably touch none of its elements.
// CHECK-LABEL: func.func @disjoint_tiles
// CHECK-COUNT-2: vector.transfer_read %{{.*}} : memref<32x8xf32>, vector<16x8xf32>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16x8xf32>, vector<16x8xf32>)
// CHECK-NOT: memref<32x8xf32>
// CHECK: scf.yield
// CHECK-COUNT-2: vector.transfer_write %{{.*}} : vector<16x8xf32>, memref<32x8xf32>
func.func @disjoint_tiles(%a: memref<64x16x8xf32>, %c: memref<32x8xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %pad = arith.constant 0.0 : f32
    %row0 = affine.apply affine_map<()[s0] -> (s0 * 32)>()[%tx]
    %row1 = affine.apply affine_map<()[s0] -> (s0 * 32 + 16)>()[%tx]
    scf.for %k = %c0 to %c64 step %c1 {
      %x = vector.transfer_read %a[%k, %c0, %c0], %pad {in_bounds = [true, true]} : memref<64x16x8xf32>, vector<16x8xf32>
      %acc0 = vector.transfer_read %c[%row0, %c0], %pad {in_bounds = [true, true]} : memref<32x8xf32>, vector<16x8xf32>
      %acc1 = vector.transfer_read %c[%row1, %c0], %pad {in_bounds = [true, true]} : memref<32x8xf32>, vector<16x8xf32>
      %s0 = arith.addf %acc0, %x : vector<16x8xf32>
      %s1 = arith.addf %acc1, %x : vector<16x8xf32>
      vector.transfer_write %s0, %c[%row0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<32x8xf32>
      vector.transfer_write %s1, %c[%row1, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<32x8xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// Two tiles that may overlap (their rows differ by an unknown amount) stay
// in memory.
// CHECK-LABEL: func.func @overlapping_tiles
// CHECK: scf.for
// CHECK-NOT: iter_args
func.func @overlapping_tiles(%a: memref<64x16x8xf32>, %c: memref<64x8xf32>, %shift: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %pad = arith.constant 0.0 : f32
    %row1 = affine.apply affine_map<()[s0] -> (s0 mod 48)>()[%shift]
    scf.for %k = %c0 to %c64 step %c1 {
      %x = vector.transfer_read %a[%k, %c0, %c0], %pad {in_bounds = [true, true]} : memref<64x16x8xf32>, vector<16x8xf32>
      %acc0 = vector.transfer_read %c[%c0, %c0], %pad {in_bounds = [true, true]} : memref<64x8xf32>, vector<16x8xf32>
      %acc1 = vector.transfer_read %c[%row1, %c0], %pad {in_bounds = [true, true]} : memref<64x8xf32>, vector<16x8xf32>
      %s0 = arith.addf %acc0, %x : vector<16x8xf32>
      %s1 = arith.addf %acc1, %x : vector<16x8xf32>
      vector.transfer_write %s0, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<64x8xf32>
      vector.transfer_write %s1, %c[%row1, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<64x8xf32>
    }
    gpu.terminator
  }
  return
}

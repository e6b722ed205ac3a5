// RUN: ke-opt %s --ke-gpu-transpose-shared-tiles --split-input-file | FileCheck %s

// A transposed-B matmul's stage: the [n][k] tile of B is written a row
// segment at a time and read as rows x kvec blocks that are transposed in
// registers. It becomes a [k][n] tile: the write transposes its vector into
// the swapped subview, the read reads kvec x rows directly.
// CHECK-LABEL: func.func @stage
// CHECK: %[[TILE:.*]] = memref.alloc() : memref<16x64xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: memref<64x16xf32, #gpu.address_space<workgroup>>
// CHECK: %[[SUB:.*]] = memref.subview %[[TILE]][%[[K:.*]], %[[N:.*]]] [4, 1] [1, 1]
// CHECK: %[[ROW:.*]] = vector.transfer_read %{{.*}} : memref<1x4xf32, strided<[?, ?], offset: ?>>, vector<1x4xf32>
// CHECK: %[[COL:.*]] = vector.transpose %[[ROW]], [1, 0] : vector<1x4xf32> to vector<4x1xf32>
// CHECK: vector.transfer_write %[[COL]], %[[SUB]][%c0, %c0] {in_bounds = [true, true]} : vector<4x1xf32>, memref<4x1xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: %[[B:.*]] = vector.transfer_read %[[TILE]][%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true, true]} : memref<16x64xf32, #gpu.address_space<workgroup>>, vector<4x4xf32>
// CHECK-NOT: vector.transpose
// CHECK: vector.extract %[[B]][0]
func.func @stage(%b: memref<64x16xf32, strided<[?, ?], offset: ?>>, %out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : f32
    %tile = memref.alloc() : memref<64x16xf32, #gpu.address_space<workgroup>>
    %n = affine.apply affine_map<()[s0] -> (s0 floordiv 4)>()[%tx]
    %k = affine.apply affine_map<()[s0] -> ((s0 mod 4) * 4)>()[%tx]
    %src = memref.subview %b[%n, %k] [1, 4] [1, 1] : memref<64x16xf32, strided<[?, ?], offset: ?>> to memref<1x4xf32, strided<[?, ?], offset: ?>>
    %dst = memref.subview %tile[%n, %k] [1, 4] [1, 1] : memref<64x16xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[16, 1], offset: ?>, #gpu.address_space<workgroup>>
    %row = vector.transfer_read %src[%c0, %c0], %pad {in_bounds = [true, true]} : memref<1x4xf32, strided<[?, ?], offset: ?>>, vector<1x4xf32>
    vector.transfer_write %row, %dst[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[16, 1], offset: ?>, #gpu.address_space<workgroup>>
    gpu.barrier
    %rows = affine.apply affine_map<()[s0] -> (s0 * 4)>()[%tx]
    %block = vector.transfer_read %tile[%rows, %c0], %pad {in_bounds = [true, true]} : memref<64x16xf32, #gpu.address_space<workgroup>>, vector<4x4xf32>
    %cols = vector.transpose %block, [1, 0] : vector<4x4xf32> to vector<4x4xf32>
    %first = vector.extract %cols[0] : vector<4xf32> from vector<4x4xf32>
    vector.transfer_write %first, %out[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A batch matmul's tile has a leading unit dimension: the read drops it
// with vector.extract before transposing; the extract is redone on the
// direct read.
// CHECK-LABEL: func.func @batch_stage
// CHECK: %[[TILE:.*]] = memref.alloc() : memref<1x16x64xf32, #gpu.address_space<workgroup>>
// CHECK: vector.transpose %{{.*}}, [0, 2, 1] : vector<1x1x4xf32> to vector<1x4x1xf32>
// CHECK: %[[B:.*]] = vector.transfer_read %[[TILE]]{{.*}} : memref<1x16x64xf32, #gpu.address_space<workgroup>>, vector<1x4x4xf32>
// CHECK: %[[B2:.*]] = vector.extract %[[B]][0] : vector<4x4xf32> from vector<1x4x4xf32>
// CHECK-NOT: vector.transpose
// CHECK: vector.extract %[[B2]][0]
func.func @batch_stage(%b: memref<1x64x16xf32>, %out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : f32
    %tile = memref.alloc() : memref<1x64x16xf32, #gpu.address_space<workgroup>>
    %row = vector.transfer_read %b[%c0, %tx, %c0], %pad {in_bounds = [true, true, true]} : memref<1x64x16xf32>, vector<1x1x4xf32>
    vector.transfer_write %row, %tile[%c0, %tx, %c0] {in_bounds = [true, true, true]} : vector<1x1x4xf32>, memref<1x64x16xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %block = vector.transfer_read %tile[%c0, %tx, %c0], %pad {in_bounds = [true, true, true]} : memref<1x64x16xf32, #gpu.address_space<workgroup>>, vector<1x4x4xf32>
    %plane = vector.extract %block[0] : vector<4x4xf32> from vector<1x4x4xf32>
    %cols = vector.transpose %plane, [1, 0] : vector<4x4xf32> to vector<4x4xf32>
    %first = vector.extract %cols[0] : vector<4xf32> from vector<4x4xf32>
    vector.transfer_write %first, %out[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A tile that is also read without a transpose (a plain matmul's A) keeps
// its layout.
// CHECK-LABEL: func.func @plain_read
// CHECK: memref.alloc() : memref<64x16xf32, #gpu.address_space<workgroup>>
// CHECK: vector.transpose
func.func @plain_read(%out: memref<4x4xf32>, %v: vector<1x4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : f32
    %tile = memref.alloc() : memref<64x16xf32, #gpu.address_space<workgroup>>
    vector.transfer_write %v, %tile[%tx, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<64x16xf32, #gpu.address_space<workgroup>>
    %block = vector.transfer_read %tile[%tx, %c0], %pad {in_bounds = [true, true]} : memref<64x16xf32, #gpu.address_space<workgroup>>, vector<4x4xf32>
    %cols = vector.transpose %block, [1, 0] : vector<4x4xf32> to vector<4x4xf32>
    %plain = vector.transfer_read %tile[%tx, %c0], %pad {in_bounds = [true, true]} : memref<64x16xf32, #gpu.address_space<workgroup>>, vector<4x4xf32>
    %sum = arith.addf %cols, %plain : vector<4x4xf32>
    vector.transfer_write %sum, %out[%c0, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<4x4xf32>
    gpu.terminator
  }
  return
}

// -----

// A tile with an access the pass does not rewrite (a scalar load) keeps its
// layout.
// CHECK-LABEL: func.func @other_access
// CHECK: memref.alloc() : memref<64x16xf32, #gpu.address_space<workgroup>>
// CHECK: vector.transpose
func.func @other_access(%out: memref<4x4xf32>, %s: memref<f32>, %v: vector<1x4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : f32
    %tile = memref.alloc() : memref<64x16xf32, #gpu.address_space<workgroup>>
    vector.transfer_write %v, %tile[%tx, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<64x16xf32, #gpu.address_space<workgroup>>
    %block = vector.transfer_read %tile[%tx, %c0], %pad {in_bounds = [true, true]} : memref<64x16xf32, #gpu.address_space<workgroup>>, vector<4x4xf32>
    %cols = vector.transpose %block, [1, 0] : vector<4x4xf32> to vector<4x4xf32>
    vector.transfer_write %cols, %out[%c0, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<4x4xf32>
    %x = memref.load %tile[%c0, %c0] : memref<64x16xf32, #gpu.address_space<workgroup>>
    memref.store %x, %s[] : memref<f32>
    gpu.terminator
  }
  return
}

// -----

// A thread's copy of several rows (a matvec's 16 x 4 block) would be
// transposed in registers, which spilled: the tile keeps its layout.
// CHECK-LABEL: func.func @block_copy
// CHECK: memref.alloc() : memref<96x16xf32, #gpu.address_space<workgroup>>
// CHECK: vector.transpose
func.func @block_copy(%out: memref<4x4xf32>, %v: vector<16x4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : f32
    %tile = memref.alloc() : memref<96x16xf32, #gpu.address_space<workgroup>>
    vector.transfer_write %v, %tile[%tx, %c0] {in_bounds = [true, true]} : vector<16x4xf32>, memref<96x16xf32, #gpu.address_space<workgroup>>
    %block = vector.transfer_read %tile[%tx, %c0], %pad {in_bounds = [true, true]} : memref<96x16xf32, #gpu.address_space<workgroup>>, vector<4x4xf32>
    %cols = vector.transpose %block, [1, 0] : vector<4x4xf32> to vector<4x4xf32>
    vector.transfer_write %cols, %out[%c0, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<4x4xf32>
    gpu.terminator
  }
  return
}

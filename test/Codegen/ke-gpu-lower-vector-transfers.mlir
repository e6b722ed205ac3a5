// RUN: ke-opt %s --ke-gpu-lower-vector-transfers | FileCheck %s

// In-bounds 1-D transfers become vector.load / vector.store (the NVVM and
// ROCDL conversions lower no transfers); a shape-cast round trip through
// 2-D folds away.
// CHECK-LABEL: func.func @tile
// CHECK-NOT: vector.transfer_read
// CHECK: %[[V:.*]] = vector.load %{{.*}}[%{{.*}}] : memref<8xf32>, vector<4xf32>
// CHECK-NOT: vector.shape_cast
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<8xf32>, vector<4xf32>
// CHECK-NOT: vector.transfer_write
func.func @tile(%m: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %m[%c0], %pad {in_bounds = [true]} : memref<8xf32>, vector<4xf32>
  %square = vector.shape_cast %v : vector<4xf32> to vector<2x2xf32>
  %flat = vector.shape_cast %square : vector<2x2xf32> to vector<4xf32>
  vector.transfer_write %flat, %m[%c4] {in_bounds = [true]} : vector<4xf32>, memref<8xf32>
  return
}

// n-D insert_strided_slice (a strided convolution's register tile built
// from rows) becomes 1-D inserts, which convert-gpu-to-nvvm lowers; left
// as it was, the kernel failed in translation with an unrealized cast.
// CHECK-LABEL: func.func @strided_slices
// CHECK-NOT: vector.insert_strided_slice
// CHECK: vector.insert %{{.*}}, %{{.*}} [1] : vector<8xf32> into vector<4x8xf32>
// CHECK-NOT: vector.insert_strided_slice
func.func @strided_slices(%tile: vector<1x4x8xf32>, %row: vector<1x1x8xf32>) -> vector<1x4x8xf32> {
  %r = vector.insert_strided_slice %row, %tile {offsets = [0, 1, 0], strides = [1, 1, 1]} : vector<1x1x8xf32> into vector<1x4x8xf32>
  return %r : vector<1x4x8xf32>
}

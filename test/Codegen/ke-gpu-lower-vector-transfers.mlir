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

// RUN: ke-opt %s --ke-strided-inserts-to-gathers | FileCheck %s

// A strided ConvTranspose's zero stuffing: every other row and column of
// the destination takes the source. The insert becomes a generic over the
// destination that reads the source where a position is inserted.
// CHECK-LABEL: func.func @zero_stuffing
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3x3xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[ZERO:.*]] = arith.constant 0.0
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x2x7x7xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME: outs(%[[E]] : tensor<1x2x7x7xf32>)
// CHECK: ^bb0(%{{.*}}: f32):
// CHECK: linalg.index 2
// CHECK: arith.remsi
// CHECK: arith.divsi
// CHECK: %[[V:.*]] = tensor.extract %[[X]]
// CHECK: %[[R:.*]] = arith.select %{{.*}}, %[[V]], %[[ZERO]] : f32
// CHECK: linalg.yield %[[R]]
// CHECK: return %[[G]]
func.func @zero_stuffing(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x7x7xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x7x7xf32>) -> tensor<1x2x7x7xf32>
  %s = tensor.insert_slice %x into %f[0, 0, 1, 1] [1, 2, 3, 3] [1, 1, 2, 2] : tensor<1x2x3x3xf32> into tensor<1x2x7x7xf32>
  return %s : tensor<1x2x7x7xf32>
}

// A rank-reducing strided insert reads the source without the dropped
// unit dimension; a destination that is no fill is read where nothing is
// inserted.
// CHECK-LABEL: func.func @rank_reducing
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<3x3xf32>, %[[D:[a-z0-9]+]]: tensor<1x6x6xf32>
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[D]] : tensor<1x6x6xf32>)
// CHECK: tensor.extract %{{.*}}[%{{[^,]*}}, %{{[^,]*}}] : tensor<3x3xf32>
func.func @rank_reducing(%x: tensor<3x3xf32>, %d: tensor<1x6x6xf32>) -> tensor<1x6x6xf32> {
  %s = tensor.insert_slice %x into %d[0, 0, 0] [1, 3, 3] [1, 2, 2] : tensor<3x3xf32> into tensor<1x6x6xf32>
  return %s : tensor<1x6x6xf32>
}

// Unit strides are box copies: left alone.
// CHECK-LABEL: func.func @unit_strides
// CHECK: tensor.insert_slice
// CHECK-NOT: linalg.generic
func.func @unit_strides(%x: tensor<3x3xf32>, %d: tensor<5x5xf32>) -> tensor<5x5xf32> {
  %s = tensor.insert_slice %x into %d[1, 1] [3, 3] [1, 1] : tensor<3x3xf32> into tensor<5x5xf32>
  return %s : tensor<5x5xf32>
}

// RUN: ke-opt %s --ke-inserts-to-gathers | FileCheck %s

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

// Unit strides into data are box copies: left alone.
// CHECK-LABEL: func.func @unit_strides
// CHECK: tensor.insert_slice
// CHECK-NOT: linalg.generic
func.func @unit_strides(%x: tensor<3x3xf32>, %d: tensor<5x5xf32>) -> tensor<5x5xf32> {
  %s = tensor.insert_slice %x into %d[1, 1] [3, 3] [1, 1] : tensor<3x3xf32> into tensor<5x5xf32>
  return %s : tensor<5x5xf32>
}

// A unit-stride insert into a fill is a padding (a stride-1
// ConvTranspose's): one generic that yields the fill's value outside the
// source and reads no init. Dimensions inserted whole (batch, channels)
// are read as they are, with no check.
// CHECK-LABEL: func.func @padding_insert
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4x4xf32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<2x3x6x6xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: outs(%[[E]] : tensor<2x3x6x6xf32>)
// CHECK: %[[N:.*]] = linalg.index 0
// CHECK-NEXT: %[[C:.*]] = linalg.index 1
// CHECK-NEXT: linalg.index 2
// CHECK-NOT: arith.remsi
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%[[N]], %[[C]], %{{.*}}, %{{.*}}]
// CHECK: arith.select %{{.*}}, %[[V]], %[[ZERO]] : f32
// CHECK: return %[[G]]
func.func @padding_insert(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x6x6xf32>) -> tensor<2x3x6x6xf32>
  %s = tensor.insert_slice %x into %f[0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1] : tensor<2x3x4x4xf32> into tensor<2x3x6x6xf32>
  return %s : tensor<2x3x6x6xf32>
}

// A tensor.pad of static amounts (low 1, 2; high 1, 1), its value
// defined outside it: the same gather, into an empty tensor.
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3x3xf32>)
// CHECK-DAG: %[[V:.*]] = arith.constant -1.0
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<1x2x5x6xf32>
// CHECK-NOT: tensor.pad
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: outs(%[[E]] : tensor<1x2x5x6xf32>)
// CHECK: linalg.index 3
// CHECK-NEXT: %[[LOW:.*]] = arith.constant 2 : index
// CHECK-NEXT: arith.subi %{{.*}}, %[[LOW]]
// CHECK: %[[R:.*]] = tensor.extract %[[X]]
// CHECK: arith.select %{{.*}}, %[[R]], %[[V]] : f32
// CHECK: return %[[G]]
func.func @pad(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x5x6xf32> {
  %v = arith.constant -1.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 2] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %v : f32
  } : tensor<1x2x3x3xf32> to tensor<1x2x5x6xf32>
  return %p : tensor<1x2x5x6xf32>
}

// A padding whose value depends on the position stays.
// CHECK-LABEL: func.func @pad_per_element
// CHECK: tensor.pad
func.func @pad_per_element(%x: tensor<3xf32>) -> tensor<5xf32> {
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    tensor.yield %f : f32
  } : tensor<3xf32> to tensor<5xf32>
  return %p : tensor<5xf32>
}

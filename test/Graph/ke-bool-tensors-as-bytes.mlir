// RUN: ke-opt %s --ke-bool-tensors-as-bytes | FileCheck %s

// Cross-entropy's mask of valid targets, read by an elementwise op and by a
// count (a reduction): the mask is written as i8, each reader truncates its
// element back to i1 first.
// CHECK-LABEL: func.func @mask_read_twice
// CHECK: %[[MASK:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<64xi8>)
// CHECK: %[[NE:.*]] = arith.cmpi ne
// CHECK: %[[BYTE:.*]] = arith.extui %[[NE]] : i1 to i8
// CHECK: linalg.yield %[[BYTE]] : i8
// CHECK: linalg.generic {{.*}} ins(%[[MASK]], %{{.*}} : tensor<64xi8>, tensor<64xf32>)
// CHECK-NEXT: ^bb0(%[[B:.*]]: i8, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[BIT:.*]] = arith.trunci %[[B]] : i8 to i1
// CHECK-NEXT: arith.select %[[BIT]]
// CHECK: linalg.generic {{.*}} ins(%[[MASK]] : tensor<64xi8>)
// CHECK-NEXT: ^bb0(%[[C:.*]]: i8, %{{.*}}: i64):
// CHECK-NEXT: %[[CBIT:.*]] = arith.trunci %[[C]] : i8 to i1
// CHECK-NEXT: arith.extui %[[CBIT]] : i1 to i64
// CHECK-NOT: xi1>
// CHECK: return
func.func @mask_read_twice(%t: tensor<64xi64>, %v: tensor<64xf32>) -> (tensor<64xf32>, tensor<i64>) {
  %c-100 = arith.constant -100 : i64
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : i64
  %e1 = tensor.empty() : tensor<64xi1>
  %mask = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%t : tensor<64xi64>) outs(%e1 : tensor<64xi1>) {
    ^bb0(%in: i64, %out: i1):
      %ne = arith.cmpi ne, %in, %c-100 : i64
      linalg.yield %ne : i1
  } -> tensor<64xi1>
  %e2 = tensor.empty() : tensor<64xf32>
  %sel = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%mask, %v : tensor<64xi1>, tensor<64xf32>) outs(%e2 : tensor<64xf32>) {
    ^bb0(%m: i1, %x: f32, %out: f32):
      %s = arith.select %m, %x, %zero : f32
      linalg.yield %s : f32
  } -> tensor<64xf32>
  %e3 = tensor.empty() : tensor<i64>
  %f = linalg.fill ins(%c0 : i64) outs(%e3 : tensor<i64>) -> tensor<i64>
  %n = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%mask : tensor<64xi1>) outs(%f : tensor<i64>) {
    ^bb0(%m: i1, %acc: i64):
      %w = arith.extui %m : i1 to i64
      %s = arith.addi %w, %acc : i64
      linalg.yield %s : i64
  } -> tensor<i64>
  return %sel, %n : tensor<64xf32>, tensor<i64>
}

// A mask the function returns stays i1 (the caller's bool tensor).
// CHECK-LABEL: func.func @returned
// CHECK: outs(%{{.*}} : tensor<64xi1>)
// CHECK-NOT: xi8>
func.func @returned(%t: tensor<64xi64>) -> tensor<64xi1> {
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<64xi1>
  %mask = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%t : tensor<64xi64>) outs(%e : tensor<64xi1>) {
    ^bb0(%in: i64, %out: i1):
      %ne = arith.cmpi ne, %in, %c0 : i64
      linalg.yield %ne : i1
  } -> tensor<64xi1>
  return %mask : tensor<64xi1>
}

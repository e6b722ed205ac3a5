// RUN: ke-opt %s --ke-normalize-empties | FileCheck %s

// The matmul's accumulator and the consumer's destination were one
// tensor.empty; now each has its own, placed beside the original (so both
// still come before the matmul, as kernel grouping needs).
// CHECK-LABEL: func.func @shared
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x16xf32>
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<8x16xf32>
// CHECK: linalg.fill {{.*}} outs(%[[E]] :
// CHECK: linalg.matmul
// CHECK: linalg.generic {{.*}} outs(%[[E2]] :
func.func @shared(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>) -> tensor<8x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.maximumf %x, %z : f32
      linalg.yield %y : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// An empty with one use stays as it is.
// CHECK-LABEL: func.func @single
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT: tensor.empty
func.func @single() -> tensor<4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// torch-mlir creates each destination right before its op: the relu's
// empty moves ahead of the matmul, so the relu joins the matmul's kernel
// group.
// CHECK-LABEL: func.func @late
// CHECK-NEXT: tensor.empty() : tensor<8x16xf32>
// CHECK-NEXT: tensor.empty() : tensor<8x16xf32>
// CHECK-NEXT: arith.constant
// CHECK: linalg.matmul
func.func @late(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>) -> tensor<8x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.maximumf %x, %z : f32
      linalg.yield %y : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

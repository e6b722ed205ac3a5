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

// Two row sums accumulate into one zero fill (torch-mlir's CSE shares it;
// TripletMarginLoss's two distances). Each gets a fill and an empty of its
// own: one buffer would hold both sums, the second overwriting the first.
// CHECK-LABEL: func.func @shared_init_fill
// CHECK-DAG: %[[E1:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-DAG: %[[E2:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<8xf32>)
// CHECK: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<8xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[F1]] : tensor<8xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[F2]] : tensor<8xf32>)
func.func @shared_init_fill(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<8x16xf32>) outs(%f : tensor<8xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  %s2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<8x16xf32>) outs(%f : tensor<8xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  return %s1, %s2 : tensor<8xf32>, tensor<8xf32>
}

// A fill that one op reads and another accumulates into: the accumulating
// use gets its own, the reader keeps the original.
// CHECK-LABEL: func.func @read_and_init_fill
// CHECK: %[[F1:.*]] = linalg.fill
// CHECK: %[[F2:.*]] = linalg.fill
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[F1]] : {{.*}}) outs(%{{.*}} : tensor<8xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[F2]] : tensor<8xf32>)
func.func @read_and_init_fill(%a: tensor<8xf32>, %b: tensor<8x16xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a, %f : tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  %s2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<8x16xf32>) outs(%f : tensor<8xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r, %s2 : tensor<8xf32>, tensor<8xf32>
}

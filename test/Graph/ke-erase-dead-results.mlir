// RUN: ke-opt %s --ke-erase-dead-results | FileCheck %s

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>

// torch-mlir's row maximum (softmax, log-softmax, amax) also computes the
// index of the maximum; nothing reads it. It goes with its fill, leaving a
// one-result reduction.
// CHECK-LABEL: func.func @row_max
// CHECK-NOT: i64
// CHECK: %[[MAX:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%{{.*}} : tensor<64x1xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[IN]], %[[OUT]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK-NEXT: } -> tensor<64x1xf32>
// CHECK-NEXT: return %[[MAX]]
func.func @row_max(%arg0: tensor<64x256xf32>) -> tensor<64x1xf32> {
  %c0_i64 = arith.constant 0 : i64
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<64x1xi64>
  %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<64x1xi64>) -> tensor<64x1xi64>
  %2 = tensor.empty() : tensor<64x1xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<64x1xf32>) -> tensor<64x1xf32>
  %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<64x256xf32>) outs(%3, %1 : tensor<64x1xf32>, tensor<64x1xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %11 = linalg.index 1 : index
    %12 = arith.index_cast %11 : index to i64
    %13 = arith.maximumf %in, %out : f32
    %14 = arith.cmpf ogt, %in, %out : f32
    %15 = arith.select %14, %12, %out_1 : i64
    linalg.yield %13, %15 : f32, i64
  } -> (tensor<64x1xf32>, tensor<64x1xi64>)
  return %4#0 : tensor<64x1xf32>
}

// An argmax whose index is returned keeps both results; an op the input
// leaves unused stays too (only what the rewrites make dead goes).
// CHECK-LABEL: func.func @argmax
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<64x1xf32>, tensor<64x1xi64>)
// CHECK: arith.select
// CHECK: %[[UNUSED:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: return
func.func @argmax(%arg0: tensor<64x256xf32>) -> tensor<64x1xi64> {
  %c0_i64 = arith.constant 0 : i64
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<64x1xi64>
  %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<64x1xi64>) -> tensor<64x1xi64>
  %2 = tensor.empty() : tensor<64x1xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<64x1xf32>) -> tensor<64x1xf32>
  %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<64x256xf32>) outs(%3, %1 : tensor<64x1xf32>, tensor<64x1xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %11 = linalg.index 1 : index
    %12 = arith.index_cast %11 : index to i64
    %13 = arith.maximumf %in, %out : f32
    %14 = arith.cmpf ogt, %in, %out : f32
    %15 = arith.select %14, %12, %out_1 : i64
    linalg.yield %13, %15 : f32, i64
  } -> (tensor<64x1xf32>, tensor<64x1xi64>)
  %unused = tensor.empty() : tensor<4xf32>
  return %4#1 : tensor<64x1xi64>
}

// A generic whose results nobody reads but whose body asserts (a gather's
// index checks, left behind after fusion copied them into its consumers)
// is dropped with its results. One that writes memory is not.
// CHECK-LABEL: func.func @assert_only
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @assert_only(%idx: tensor<64xi64>) {
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<64xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%idx : tensor<64xi64>) outs(%e : tensor<64xi64>) {
    ^bb0(%in: i64, %out: i64):
      %ok = arith.cmpi sge, %in, %c0 : i64
      cf.assert %ok, "index must be larger or equal to 0"
      linalg.yield %in : i64
  } -> tensor<64xi64>
  return
}

// CHECK-LABEL: func.func @stores_kept
// CHECK: linalg.generic
// CHECK: memref.store
func.func @stores_kept(%idx: tensor<64xi64>, %m: memref<64xi64>) {
  %e = tensor.empty() : tensor<64xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%idx : tensor<64xi64>) outs(%e : tensor<64xi64>) {
    ^bb0(%in: i64, %out: i64):
      %i = linalg.index 0 : index
      memref.store %in, %m[%i] : memref<64xi64>
      linalg.yield %in : i64
  } -> tensor<64xi64>
  return
}

// A generic that only copies its input (what ke-demote-f64 leaves of
// InstanceNorm's extf to f64) is its input: the reader reads %x (twice, then once: the duplicate
// operand goes).
// CHECK-LABEL: func.func @identity_copy
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return
// A copy that changes the element type, or reads through a permutation,
// stays.
// CHECK-LABEL: func.func @not_copies
// CHECK: arith.extf
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}]
// CHECK: return
func.func @identity_copy(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
func.func @not_copies(%x: tensor<8x8xf32>) -> (tensor<8x8xf64>, tensor<8x8xf32>) {
  %e = tensor.empty() : tensor<8x8xf64>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf64>) {
  ^bb0(%in: f32, %out: f64):
    %d = arith.extf %in : f32 to f64
    linalg.yield %d : f64
  } -> tensor<8x8xf64>
  %e2 = tensor.empty() : tensor<8x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xf32>) outs(%e2 : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x8xf32>
  return %w, %t : tensor<8x8xf64>, tensor<8x8xf32>
}

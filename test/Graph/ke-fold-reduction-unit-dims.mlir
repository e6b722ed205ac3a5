// RUN: ke-opt %s --ke-fold-reduction-unit-dims --split-input-file | FileCheck %s

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>

// torch-mlir's log-softmax tail: a row sum kept as 64x1 and read through
// (d0, 0). Afterwards the sum is a tensor<64xf32> read through the row map,
// its fill too, and no reshape is left between them.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @row_sum
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<64xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: outs(%[[FILL]] : tensor<64xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]]
// CHECK-SAME: ins(%{{.*}}, %[[SUM]] : tensor<64x256xf32>, tensor<64xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor<64x1xf32>
func.func @row_sum(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<64x1xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<64x1xf32>) -> tensor<64x1xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x256xf32>) outs(%1 : tensor<64x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    %s = arith.addf %e, %out : f32
    linalg.yield %s : f32
  } -> tensor<64x1xf32>
  %3 = tensor.empty() : tensor<64x256xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %2 : tensor<64x256xf32>, tensor<64x1xf32>) outs(%3 : tensor<64x256xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %l = math.log %in_1 : f32
    %d = arith.subf %in, %l : f32
    linalg.yield %d : f32
  } -> tensor<64x256xf32>
  return %4 : tensor<64x256xf32>
}

// -----

// Batch 1: the elementwise op after a convolution has a unit loop and stays
// as it is (a reshape would separate it from the convolution's kernel); so
// does a generic without constant-0 results.
// CHECK-LABEL: func.func @batch_one
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<1x8x14x14xf32>, tensor<1x8x1x1xf32>)
// CHECK-NOT: tensor.expand_shape
func.func @batch_one(%c: tensor<1x8x14x14xf32>, %s: tensor<1x8x1x1xf32>) -> tensor<1x8x14x14xf32> {
  %e = tensor.empty() : tensor<1x8x14x14xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s : tensor<1x8x14x14xf32>, tensor<1x8x1x1xf32>) outs(%e : tensor<1x8x14x14xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %m = arith.mulf %in, %in_1 : f32
    linalg.yield %m : f32
  } -> tensor<1x8x14x14xf32>
  return %r : tensor<1x8x14x14xf32>
}

// -----

// Log-softmax's log of the row sums, between an expand_shape and a
// collapse_shape that add and drop the unit dimension: folded, so the
// reshapes go (they kept the log out of the subtraction's kernel, and the
// model planner read the collapsed view with the expanded rank).
// CHECK-LABEL: func.func @between_unit_reshapes
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel"]
// CHECK: math.log
func.func @between_unit_reshapes(%sum: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64x1xf32>
  %x = tensor.expand_shape %sum [[0, 1]] output_shape [64, 1] : tensor<64xf32> into tensor<64x1xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x1xf32>) outs(%e : tensor<64x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.log %in : f32
    linalg.yield %v : f32
  } -> tensor<64x1xf32>
  %c = tensor.collapse_shape %l [[0, 1]] : tensor<64x1xf32> into tensor<64xf32>
  return %c : tensor<64xf32>
}

// -----

// InstanceNorm's statistics: batch norm over the input reshaped to
// [1, N * C, H, W], a reduction whose unit loop d0 is reduced outside the
// parallel channels. Its unit dimensions go: a [channels, H, W] reduction
// with H and W innermost, which the row reductions take once they are
// collapsed, and an expand_shape back to the kept shape.
// CHECK-LABEL: func.func @instance_norm_sum
// CHECK: %[[IN:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<1x6x4x8xf32> into tensor<6x4x8xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[IN]] : tensor<6x4x8xf32>) outs(%{{.*}} : tensor<6xf32>)
// CHECK: tensor.expand_shape %[[SUM]] {{\[\[}}0, 1, 2, 3]] output_shape [1, 6, 1, 1] : tensor<6xf32> into tensor<1x6x1x1xf32>
func.func @instance_norm_sum(%x: tensor<1x6x4x8xf32>) -> tensor<1x6x1x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x1x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x1x1xf32>) -> tensor<1x6x1x1xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%x : tensor<1x6x4x8xf32>) outs(%f : tensor<1x6x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<1x6x1x1xf32>
  return %s : tensor<1x6x1x1xf32>
}

// -----

// A reduction over a kept dimension of one (logsumexp of a GEMM's row mean,
// read as tensor<8x1xf32>) reduces nothing: folded, it would be an
// all-parallel op reading its init, whose fill no kernel group takes. It is
// left as it is.
// CHECK-LABEL: func.func @unit_reduction_only
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<8x1xf32>) outs(%[[F]] : tensor<8xf32>)
func.func @unit_reduction_only(%x: tensor<8x1xf32>) -> tensor<8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x1xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.maximumf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %m : tensor<8xf32>
}

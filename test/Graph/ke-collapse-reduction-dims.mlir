// RUN: ke-opt %s --ke-collapse-reduction-dims | FileCheck %s

// x.mean(dim=[1, 2, 3]) as a sum: three reduction loops read as one
// contiguous run become one loop over a collapsed view of the input.
// CHECK-LABEL: func.func @sum_all_but_batch
// CHECK-SAME: (%[[X:.*]]: tensor<4x3x5x6xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2, 3]] : tensor<4x3x5x6xf32> into tensor<4x90xf32>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[FLAT]] : tensor<4x90xf32>)
#in = affine_map<(b, c, h, w) -> (b, c, h, w)>
#out = affine_map<(b, c, h, w) -> (b)>
func.func @sum_all_but_batch(%x: tensor<4x3x5x6xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%x : tensor<4x3x5x6xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Reductions that are not consecutive (d1 and d3 around a parallel d2)
// are left alone.
// CHECK-LABEL: func.func @split_reductions
// CHECK-NOT: tensor.collapse_shape
// CHECK: iterator_types = ["parallel", "reduction", "parallel", "reduction"]
#out2 = affine_map<(b, c, h, w) -> (b, h)>
func.func @split_reductions(%x: tensor<4x3x5x6xf32>, %init: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %r = linalg.generic {indexing_maps = [#in, #out2], iterator_types = ["parallel", "reduction", "parallel", "reduction"]} ins(%x : tensor<4x3x5x6xf32>) outs(%init : tensor<4x5xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// An operand that reads the reduction dimensions out of order is left
// alone.
// CHECK-LABEL: func.func @transposed_read
// CHECK-NOT: tensor.collapse_shape
#tin = affine_map<(b, c, h) -> (b, h, c)>
#tout = affine_map<(b, c, h) -> (b)>
func.func @transposed_read(%x: tensor<4x5x3xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#tin, #tout], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : tensor<4x5x3xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// MaxPool3d as torch-mlir writes it: window loops read through `d2 * 2 +
// d5`. No contiguous run: left alone (collapsing made invalid IR).
// CHECK-LABEL: func.func @pooling_window
// CHECK-NOT: tensor.collapse_shape
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
#win = affine_map<(n, c, h, kh, kw) -> (n, c, h * 2 + kh, kw)>
#window = affine_map<(n, c, h, kh, kw) -> (kh, kw)>
#wout = affine_map<(n, c, h, kh, kw) -> (n, c, h)>
func.func @pooling_window(%x: tensor<1x2x9x3xf32>, %w: tensor<3x3xf32>, %init: tensor<1x2x4xf32>) -> tensor<1x2x4xf32> {
  %r = linalg.generic {indexing_maps = [#win, #window, #wout], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<1x2x9x3xf32>, tensor<3x3xf32>) outs(%init : tensor<1x2x4xf32>) {
  ^bb0(%v: f32, %unused: f32, %acc: f32):
    %s = arith.maximumf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4xf32>
  return %r : tensor<1x2x4xf32>
}

// A mean over kept unit dimensions (torch.mean(x, [2, 3], keepdim=True) of
// a 1 x 1 plane): its result map has constant zeros, which the collapse
// cannot rewrite (it made (d0, d1, d0, d0)). Left alone.
// CHECK-LABEL: func.func @kept_unit_dims
// CHECK-NOT: tensor.collapse_shape
// CHECK: iterator_types = ["parallel", "parallel", "reduction", "reduction"]
#uin = affine_map<(n, c, h, w) -> (n, c, h, w)>
#uout = affine_map<(n, c, h, w) -> (n, c, 0, 0)>
func.func @kept_unit_dims(%x: tensor<2x3x1x1xf32>, %init: tensor<2x3x1x1xf32>) -> tensor<2x3x1x1xf32> {
  %r = linalg.generic {indexing_maps = [#uin, #uout], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<2x3x1x1xf32>) outs(%init : tensor<2x3x1x1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x3x1x1xf32>
  return %r : tensor<2x3x1x1xf32>
}

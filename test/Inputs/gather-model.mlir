// ConvTranspose1d as torch-mlir imports it, reduced: the weight is flipped
// by a generic that reads it with tensor.extract (the weight is no operand
// of the generic, only captured by its body), then a convolution.
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @forward(%x: tensor<2x4x16xf32>, %w: tensor<4x8x3xf32>) -> tensor<2x8x14xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<8x4x3xf32>
  %flipped = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<8x4x3xf32>) {
  ^bb0(%out: f32):
    %o = linalg.index 0 : index
    %i = linalg.index 1 : index
    %k = linalg.index 2 : index
    %r = arith.subi %c2, %k : index
    %v = tensor.extract %w[%i, %o, %r] : tensor<4x8x3xf32>
    linalg.yield %v : f32
  } -> tensor<8x4x3xf32>
  %init = tensor.empty() : tensor<2x8x14xf32>
  %f = linalg.fill ins(%zero : f32) outs(%init : tensor<2x8x14xf32>) -> tensor<2x8x14xf32>
  %y = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%x, %flipped : tensor<2x4x16xf32>, tensor<8x4x3xf32>) outs(%f : tensor<2x8x14xf32>) -> tensor<2x8x14xf32>
  return %y : tensor<2x8x14xf32>
}

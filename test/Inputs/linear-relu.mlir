// nn.Linear(128, 256) + ReLU as torch-mlir imports it: the weight
// transposed into the matmul, the bias broadcast, then two elementwise ops.
func.func @forward(%x: tensor<64x128xf32>, %w: tensor<256x128xf32>, %b: tensor<256xf32>) -> tensor<64x256xf32> {
  %zero = arith.constant 0.0 : f32
  %wt_e = tensor.empty() : tensor<128x256xf32>
  %wt = linalg.transpose ins(%w : tensor<256x128xf32>) outs(%wt_e : tensor<128x256xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<64x256xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  %m = linalg.matmul ins(%x, %wt : tensor<64x128xf32>, tensor<128x256xf32>) outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
  %bb_e = tensor.empty() : tensor<64x256xf32>
  %bb = linalg.broadcast ins(%b : tensor<256xf32>) outs(%bb_e : tensor<64x256xf32>) dimensions = [0]
  %e2 = tensor.empty() : tensor<64x256xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m, %bb : tensor<64x256xf32>, tensor<64x256xf32>) outs(%e2 : tensor<64x256xf32>) {
  ^bb0(%a: f32, %q: f32, %o: f32):
    %t = arith.addf %a, %q : f32
    linalg.yield %t : f32
  } -> tensor<64x256xf32>
  %e3 = tensor.empty() : tensor<64x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<64x256xf32>) outs(%e3 : tensor<64x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %zero : f32
    linalg.yield %t : f32
  } -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}

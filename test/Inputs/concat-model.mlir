// A model with a tensor.concat between its kernel groups (box copies in a
// GPU model): relu(cat([x, x], dim=1)).
func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %z = arith.constant 0.0 : f32
  %c = tensor.concat dim(1) %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %z : f32
    linalg.yield %t : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

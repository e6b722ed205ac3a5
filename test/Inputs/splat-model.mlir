// A model with a tensor.splat between its kernel groups (no GPU lowering
// outside a kernel group yet).
func.func @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
  %one = arith.constant 1.0 : f32
  %s = tensor.splat %one : tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %s : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// Two kernel groups on GPU targets: a row sum, and an elementwise op that
// reads a function argument (nothing to fuse between them).
func.func @two_groups(%x: tensor<16x128xf32>, %y: tensor<16x128xf32>) -> (tensor<16xf32>, tensor<16x128xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %r = linalg.reduce ins(%x : tensor<16x128xf32>) outs(%c : tensor<16xf32>) dimensions = [1]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  %e2 = tensor.empty() : tensor<16x128xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<16x128xf32>) outs(%e2 : tensor<16x128xf32>) {
    ^bb0(%v: f32, %o: f32):
      %w = math.tanh %v : f32
      linalg.yield %w : f32
  } -> tensor<16x128xf32>
  return %r, %t : tensor<16xf32>, tensor<16x128xf32>
}

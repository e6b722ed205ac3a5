// Two row sums of one workload: the first is fused into the norm that reads
// it, the second is a kernel group of its own (GroupNorm's statistics had
// this shape). Compile went by the workload's first occurrence, compiled
// nothing for the second, and failed with "this op's kernel was not
// compiled".
func.func @forward(%x: tensor<4x128xf32>) -> (tensor<4x128xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x128xf32>
  %er = tensor.empty() : tensor<4xf32>
  %er2 = tensor.empty() : tensor<4xf32>
  %ssi = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x128xf32>) outs(%ssi : tensor<4xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %q = arith.mulf %v, %v : f32
      %s = arith.addf %q, %acc : f32
      linalg.yield %s : f32
  } -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss : tensor<4x128xf32>, tensor<4xf32>) outs(%e : tensor<4x128xf32>) {
    ^bb0(%v: f32, %r0: f32, %o: f32):
      %y = arith.mulf %v, %r0 : f32
      linalg.yield %y : f32
  } -> tensor<4x128xf32>
  %ssi2 = linalg.fill ins(%zero : f32) outs(%er2 : tensor<4xf32>) -> tensor<4xf32>
  %ss2 = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%r : tensor<4x128xf32>) outs(%ssi2 : tensor<4xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %q = arith.mulf %v, %v : f32
      %s = arith.addf %q, %acc : f32
      linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r, %ss2 : tensor<4x128xf32>, tensor<4xf32>
}

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%a: tensor<32x16xf32>, %b: tensor<16x24xf32>) -> tensor<32x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x24xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<32x24xf32>) -> tensor<32x24xf32>
  %m = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x24xf32>) outs(%c : tensor<32x24xf32>) -> tensor<32x24xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<32x24xf32>) outs(%e : tensor<32x24xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.maximumf %x, %zero : f32
      linalg.yield %y : f32
  } -> tensor<32x24xf32>
  return %r : tensor<32x24xf32>
}

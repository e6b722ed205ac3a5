// An all-parallel op reading a filled init (max against -inf): the fill is
// in the op's kernel group; both were "fused" into each other before.
func.func @forward(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%f : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.maximumf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<8x16xf32>
  return %m : tensor<8x16xf32>
}

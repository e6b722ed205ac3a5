// A two-layer MLP block: matmul + bias + GELU(tanh approximation) + matmul,
// then softmax over the classes. Batch 64, 512 -> 1024 -> 256.
#map_bias = affine_map<(d0, d1) -> (d1)>
#map_id = affine_map<(d0, d1) -> (d0, d1)>
func.func @mlp(%x: tensor<64x512xf32>, %w1: tensor<512x1024xf32>, %b1: tensor<1024xf32>,
               %w2: tensor<1024x256xf32>) -> tensor<64x256xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %k0 = arith.constant 0.7978845608 : f32
  %k1 = arith.constant 0.044715 : f32

  %e1 = tensor.empty() : tensor<64x1024xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<64x512xf32>, tensor<512x1024xf32>)
                     outs(%z1 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  // bias + gelu(x) = 0.5 x (1 + tanh(0.79788 (x + 0.044715 x^3)))
  %g = linalg.generic {indexing_maps = [#map_id, #map_bias, #map_id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h, %b1 : tensor<64x1024xf32>, tensor<1024xf32>) outs(%e1 : tensor<64x1024xf32>) {
    ^bb0(%v: f32, %b: f32, %out: f32):
      %a = arith.addf %v, %b : f32
      %a3 = arith.mulf %a, %a : f32
      %a3b = arith.mulf %a3, %a : f32
      %t0 = arith.mulf %a3b, %k1 : f32
      %t1 = arith.addf %a, %t0 : f32
      %t2 = arith.mulf %t1, %k0 : f32
      %t3 = math.tanh %t2 : f32
      %t4 = arith.addf %t3, %one : f32
      %t5 = arith.mulf %a, %t4 : f32
      %r = arith.mulf %t5, %half : f32
      linalg.yield %r : f32
  } -> tensor<64x1024xf32>

  %e2 = tensor.empty() : tensor<64x256xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %o = linalg.matmul ins(%g, %w2 : tensor<64x1024xf32>, tensor<1024x256xf32>)
                     outs(%z2 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %p = linalg.softmax dimension(1) ins(%o : tensor<64x256xf32>)
                                   outs(%e2 : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %p : tensor<64x256xf32>
}

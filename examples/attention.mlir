// Scaled dot-product attention for 8 heads, sequence 128, head size 64:
// scores = Q K^T / sqrt(64), softmax over keys, then scores V.
#map3 = affine_map<(b, i, j) -> (b, i, j)>
func.func @attention(%q: tensor<8x128x64xbf16>, %kt: tensor<8x64x128xbf16>,
                     %v: tensor<8x128x64xbf16>) -> tensor<8x128x64xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %es = tensor.empty() : tensor<8x128x128xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x128x64xbf16>, tensor<8x64x128xbf16>)
                           outs(%zs : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %scaled = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<8x128x128xf32>) outs(%es : tensor<8x128x128xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %scale : f32
      linalg.yield %m : f32
  } -> tensor<8x128x128xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<8x128x128xf32>)
                                   outs(%es : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %pb = arith.truncf %p : tensor<8x128x128xf32> to tensor<8x128x128xbf16>
  %eo = tensor.empty() : tensor<8x128x64xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
  %o = linalg.batch_matmul ins(%pb, %v : tensor<8x128x128xbf16>, tensor<8x128x64xbf16>)
                           outs(%zo : tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}

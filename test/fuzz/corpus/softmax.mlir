func.func @softmax(%arg0: tensor<4x128xbf16>, %arg1: tensor<4x128xbf16>) -> tensor<4x128xbf16> {
  %0 = linalg.softmax dimension(1) ins(%arg0 : tensor<4x128xbf16>)
                                   outs(%arg1 : tensor<4x128xbf16>) -> tensor<4x128xbf16>
  return %0 : tensor<4x128xbf16>
}

// A type is missing after the function argument.
func.func @broken(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.exp ins(%a : tensor<4xf32>) outs(%a tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

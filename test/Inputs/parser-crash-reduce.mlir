func.func @row_sum(%arg0: tensor<16x32xf32>, %arg1: tensor<16xf32>) -> tensor<16xf32> {
  %0 = linalg.reduce ins(%arg0 : tensor<16x32xf32>) outs(%arg1 : tensor<16xf32>) dimensions = [d %s : f32
    }
  return %0 : tensor<16xf32>
}

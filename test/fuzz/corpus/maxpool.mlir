func.func @maxpool(%arg0: tensor<1x8x8x4xf32>, %arg1: tensor<2x2xf32>,
                   %arg2: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%arg0, %arg1 : tensor<1x8x8x4xf32>, tensor<2x2xf32>)
       outs(%arg2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

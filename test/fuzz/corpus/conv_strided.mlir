func.func @conv_strided(%arg0: tensor<1x3x9x9xf32>, %arg1: tensor<8x3x3x3xf32>,
                        %arg2: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%arg0, %arg1 : tensor<1x3x9x9xf32>, tensor<8x3x3x3xf32>)
       outs(%arg2 : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

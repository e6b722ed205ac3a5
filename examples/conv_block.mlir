// A ResNet-style block in NHWC: 3x3 conv, ReLU, 3x3 conv, ReLU, 2x2 max pool.
// The two convolutions have the same shape, so they are one workload that
// occurs twice.
func.func @conv_block(%x: tensor<1x58x58x64xf32>, %w1: tensor<3x3x64x64xf32>,
                      %w2: tensor<3x3x64x64xf32>) -> tensor<1x28x28x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<1x56x56x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  %c1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%x, %w1 : tensor<1x58x58x64xf32>, tensor<3x3x64x64xf32>)
        outs(%z : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  %r1 = linalg.map { arith.maximumf } ins(%c1, %z : tensor<1x56x56x64xf32>, tensor<1x56x56x64xf32>)
                   outs(%e : tensor<1x56x56x64xf32>)
  %pad = tensor.pad %r1 low[0, 1, 1, 0] high[0, 1, 1, 0] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f32
  } : tensor<1x56x56x64xf32> to tensor<1x58x58x64xf32>
  %c2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%pad, %w2 : tensor<1x58x58x64xf32>, tensor<3x3x64x64xf32>)
        outs(%z : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  %r2 = linalg.map { arith.maximumf } ins(%c2, %z : tensor<1x56x56x64xf32>, tensor<1x56x56x64xf32>)
                   outs(%e : tensor<1x56x56x64xf32>)
  %window = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<1x28x28x64xf32>
  %pinit = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x28x28x64xf32>) -> tensor<1x28x28x64xf32>
  %pool = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
          ins(%r2, %window : tensor<1x56x56x64xf32>, tensor<2x2xf32>)
          outs(%pinit : tensor<1x28x28x64xf32>) -> tensor<1x28x28x64xf32>
  return %pool : tensor<1x28x28x64xf32>
}

// ResNet stage 2's 3x3 convolution in bf16, channels-last, batch 32: the
// input already padded (58 x 58 for 56 x 56 outputs), 64 -> 64 channels,
// f32 accumulation and a bf16 result: issue #15's convolution target,
// against cuDNN (F.conv2d on the same padded input, channels_last, bf16).
func.func @conv2d_nhwc_bf16_32x56x56x64_3x3(%x: tensor<32x58x58x64xbf16>, %w: tensor<3x3x64x64xbf16>) -> tensor<32x56x56x64xbf16> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x56x56x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<32x56x56x64xf32>) -> tensor<32x56x56x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<32x58x58x64xbf16>, tensor<3x3x64x64xbf16>) outs(%c : tensor<32x56x56x64xf32>) -> tensor<32x56x56x64xf32>
  %o = tensor.empty() : tensor<32x56x56x64xbf16>
  %t = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (n, h, w, f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%r : tensor<32x56x56x64xf32>) outs(%o : tensor<32x56x56x64xbf16>) {
  ^bb0(%a: f32, %out: bf16):
    %b = arith.truncf %a : f32 to bf16
    linalg.yield %b : bf16
  } -> tensor<32x56x56x64xbf16>
  return %t : tensor<32x56x56x64xbf16>
}

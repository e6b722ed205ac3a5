// 16-bit contractions for the MFMA tests (hsaco-mfma.test): shapes that are
// not multiples of the default 128 x 128 block tile, every operand layout,
// a batch, a fused epilogue with a bf16 result, an implicit-GEMM
// convolution.
func.func @matmul_bf16_tails(%a: tensor<200x72xbf16>, %b: tensor<72x136xbf16>) -> tensor<200x136xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<200x136xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<200x136xf32>) -> tensor<200x136xf32>
  %r = linalg.matmul ins(%a, %b : tensor<200x72xbf16>, tensor<72x136xbf16>) outs(%c : tensor<200x136xf32>) -> tensor<200x136xf32>
  return %r : tensor<200x136xf32>
}

func.func @matmul_f16_transposed(%a: tensor<64x128xf16>, %b: tensor<96x64xf16>) -> tensor<128x96xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x96xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<128x96xf32>) -> tensor<128x96xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : tensor<64x128xf16>, tensor<96x64xf16>) outs(%c : tensor<128x96xf32>) -> tensor<128x96xf32>
  return %r : tensor<128x96xf32>
}

func.func @batch_matmul_bf16(%a: tensor<4x64x32xbf16>, %b: tensor<4x32x64xbf16>) -> tensor<4x64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x64x32xbf16>, tensor<4x32x64xbf16>) outs(%c : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  return %r : tensor<4x64x64xf32>
}

func.func @linear_gelu_bf16(%a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>, %bias: tensor<128xf32>) -> tensor<128x128xbf16> {
  %z = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.70710678 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x64xbf16>, tensor<64x128xbf16>) outs(%c : tensor<128x128xf32>) -> tensor<128x128xf32>
  %o = tensor.empty() : tensor<128x128xbf16>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%r, %bias : tensor<128x128xf32>, tensor<128xf32>) outs(%o : tensor<128x128xbf16>) {
  ^bb0(%x: f32, %bv: f32, %out: bf16):
    %y = arith.addf %x, %bv : f32
    %s = arith.mulf %y, %rsqrt2 : f32
    %erf = math.erf %s : f32
    %p = arith.addf %erf, %one : f32
    %h = arith.mulf %y, %half : f32
    %gelu = arith.mulf %h, %p : f32
    %t = arith.truncf %gelu : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<128x128xbf16>
  return %g : tensor<128x128xbf16>
}

func.func @conv_nhwc_f16(%i: tensor<2x10x10x16xf16>, %f: tensor<3x3x16x32xf16>) -> tensor<2x8x8x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<2x8x8x32xf32>) -> tensor<2x8x8x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%i, %f : tensor<2x10x10x16xf16>, tensor<3x3x16x32xf16>) outs(%c : tensor<2x8x8x32xf32>) -> tensor<2x8x8x32xf32>
  return %r : tensor<2x8x8x32xf32>
}

// An MLP layer in bf16: x (4096 x 4096) @ W^T (W: 16384 x 4096, nn.Linear's
// N x K layout) with an f32 accumulator, + bias, exact (erf) GELU, bf16
// result: issue #15's epilogue target, against PyTorch eager
// (F.gelu(F.linear(x, W, b)): cuBLAS with its bias epilogue, then a GELU
// kernel).
func.func @mlp_bf16_4096x4096x16384(%x: tensor<4096x4096xbf16>, %w: tensor<16384x4096xbf16>, %bias: tensor<16384xbf16>) -> tensor<4096x16384xbf16> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x16384xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<4096x16384xf32>) -> tensor<4096x16384xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : tensor<4096x4096xbf16>, tensor<16384x4096xbf16>) outs(%c : tensor<4096x16384xf32>) -> tensor<4096x16384xf32>
  %o = tensor.empty() : tensor<4096x16384xbf16>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%r, %bias : tensor<4096x16384xf32>, tensor<16384xbf16>) outs(%o : tensor<4096x16384xbf16>) {
  ^bb0(%a: f32, %b: bf16, %out: bf16):
    %bf = arith.extf %b : bf16 to f32
    %s = arith.addf %a, %bf : f32
    %rsqrt2 = arith.constant 0.70710678118654752 : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %u = arith.mulf %s, %rsqrt2 : f32
    %erf = math.erf %u : f32
    %p = arith.addf %erf, %one : f32
    %h = arith.mulf %s, %half : f32
    %y = arith.mulf %h, %p : f32
    %t = arith.truncf %y : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4096x16384xbf16>
  return %g : tensor<4096x16384xbf16>
}

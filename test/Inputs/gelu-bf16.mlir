// torch-mlir's exact GELU of a bf16 tensor: erf in bf16 arithmetic, which
// the CPU lowering cannot take (ke-expand-math approximates f32 erf only)
// unless the graph preparation computes the op in f32.
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @gelu(%x: tensor<16x64xbf16>) -> tensor<16x64xbf16> {
  %half = arith.constant 5.000000e-01 : bf16
  %one = arith.constant 1.000000e+00 : bf16
  %rsqrt2 = arith.constant 7.070310e-01 : bf16
  %e = tensor.empty() : tensor<16x64xbf16>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x64xbf16>) outs(%e : tensor<16x64xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %s = arith.mulf %in, %rsqrt2 : bf16
    %f = math.erf %s : bf16
    %a = arith.addf %f, %one : bf16
    %m = arith.mulf %a, %half : bf16
    %y = arith.mulf %in, %m : bf16
    linalg.yield %y : bf16
  } -> tensor<16x64xbf16>
  return %r : tensor<16x64xbf16>
}

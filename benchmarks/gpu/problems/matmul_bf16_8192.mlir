// A bf16 matmul with an f32 result, 8192^3: issue #15's tensor-core target
// (against cuBLAS through torch.mm(..., out_dtype=torch.float32)).
func.func @matmul_bf16_8192(%a: tensor<8192x8192xbf16>, %b: tensor<8192x8192xbf16>) -> tensor<8192x8192xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8192x8192xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<8192x8192xf32>) -> tensor<8192x8192xf32>
  %r = linalg.matmul ins(%a, %b : tensor<8192x8192xbf16>, tensor<8192x8192xbf16>) outs(%c : tensor<8192x8192xf32>) -> tensor<8192x8192xf32>
  return %r : tensor<8192x8192xf32>
}

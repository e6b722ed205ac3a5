// An attention-like bf16 batch matmul with an f32 result: 32 batches of
// (1024 x 128) @ (128 x 1024), issue #15's batched tensor-core target
// (against cuBLAS through torch.bmm(..., out_dtype=torch.float32)).
func.func @bmm_bf16_32x1024x1024x128(%a: tensor<32x1024x128xbf16>, %b: tensor<32x128x1024xbf16>) -> tensor<32x1024x1024xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x1024x1024xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<32x1024x1024xf32>) -> tensor<32x1024x1024xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<32x1024x128xbf16>, tensor<32x128x1024xbf16>) outs(%c : tensor<32x1024x1024xf32>) -> tensor<32x1024x1024xf32>
  return %r : tensor<32x1024x1024xf32>
}

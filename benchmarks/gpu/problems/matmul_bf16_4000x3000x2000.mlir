// A bf16 matmul of shapes no tile divides (M x N x K = 4000 x 3000 x 2000),
// f32 result: partial tiles on the tensor cores (against cuBLAS through
// torch.mm(..., out_dtype=torch.float32)).
func.func @matmul_bf16_4000x3000x2000(%a: tensor<4000x2000xbf16>, %b: tensor<2000x3000xbf16>) -> tensor<4000x3000xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4000x3000xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<4000x3000xf32>) -> tensor<4000x3000xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4000x2000xbf16>, tensor<2000x3000xbf16>) outs(%c : tensor<4000x3000xf32>) -> tensor<4000x3000xf32>
  return %r : tensor<4000x3000xf32>
}

// A bf16 matmul with a small output and a long K (KernelBench level 1's
// "large K" shape), f32 result: 2 output tiles for 132 SMs unless K is
// split over blocks (gpu.wgmma's split.k); against cuBLAS through
// torch.mm(..., out_dtype=torch.float32).
func.func @matmul_bf16_256x256x131072(%a: tensor<256x131072xbf16>, %b: tensor<131072x256xbf16>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x131072xbf16>, tensor<131072x256xbf16>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

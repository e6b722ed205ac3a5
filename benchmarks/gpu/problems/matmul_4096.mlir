// The fp32 matmul of issue #5's cuBLAS target: 4096^3, fill + matmul.
func.func @matmul_4096(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x4096xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4096x4096xf32>, tensor<4096x4096xf32>) outs(%c : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %r : tensor<4096x4096xf32>
}

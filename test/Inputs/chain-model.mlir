// Four matmuls in a chain (they never fuse): three 4 KiB intermediates, of
// which at most two are alive at once (a matmul reads one and writes the
// next), so the temporaries' arena holds two.
func.func @forward(%x: tensor<32x32xf32>, %w: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %t1 = linalg.matmul ins(%x, %w : tensor<32x32xf32>, tensor<32x32xf32>) outs(%f1 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %e2 = tensor.empty() : tensor<32x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %t2 = linalg.matmul ins(%t1, %w : tensor<32x32xf32>, tensor<32x32xf32>) outs(%f2 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %e3 = tensor.empty() : tensor<32x32xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %t3 = linalg.matmul ins(%t2, %w : tensor<32x32xf32>, tensor<32x32xf32>) outs(%f3 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %e4 = tensor.empty() : tensor<32x32xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %y = linalg.matmul ins(%t3, %w : tensor<32x32xf32>, tensor<32x32xf32>) outs(%f4 : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %y : tensor<32x32xf32>
}

func.func @same_matmul_again(%arg0: tensor<64x32xf32>, %arg1: tensor<32x16xf32>,
                             %arg2: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %0 = linalg.matmul ins(%arg0, %arg1 : tensor<64x32xf32>, tensor<32x16xf32>)
                     outs(%arg2 : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

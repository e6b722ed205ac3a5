func.func @bmm(%arg0: tensor<2x8x4xf16>, %arg1: tensor<2x4x16xf16>,
               %arg2: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %0 = linalg.batch_matmul ins(%arg0, %arg1 : tensor<2x8x4xf16>, tensor<2x4x16xf16>)
                           outs(%arg2 : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

func.func @row_sum(%arg0: tensor<16x32xf32>, %arg1: tensor<16xf32>) -> tensor<16xf32> {
  %0 = linalg.reduce ins(%arg0 : tensor<16x32xf32>) outs(%arg1 : tensor<16xf32>) dimensions = {1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
  ÿþ linalg.yield %s : f32
    }
  return %0 : tensor<16xf32>
}

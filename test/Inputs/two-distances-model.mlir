// Two row sums of one workload (the same shapes and body) whose groups
// differ: the elementwise op that reads both joins only the second sum's
// kernel group (the first sum's group runs before the second sum exists).
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0) -> (d0)>
module {
  func.func @forward(%a: tensor<64x512xf32>, %b: tensor<64x512xf32>) -> tensor<64xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %e1 = tensor.empty() : tensor<64xf32>
    %e2 = tensor.empty() : tensor<64xf32>
    %e3 = tensor.empty() : tensor<64xf32>
    %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
    %s1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<64x512xf32>) outs(%f1 : tensor<64xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %sq = arith.mulf %in, %in : f32
      %s = arith.addf %sq, %acc : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64xf32>) -> tensor<64xf32>
    %s2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%b : tensor<64x512xf32>) outs(%f2 : tensor<64xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %sq = arith.mulf %in, %in : f32
      %s = arith.addf %sq, %acc : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    %d = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel"]} ins(%s1, %s2 : tensor<64xf32>, tensor<64xf32>) outs(%e3 : tensor<64xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %r = arith.subf %x, %y : f32
      linalg.yield %r : f32
    } -> tensor<64xf32>
    return %d : tensor<64xf32>
  }
}

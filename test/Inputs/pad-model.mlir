// A model with a tensor.pad before its kernel group (a fill and a box
// copy in a GPU model).
func.func @forward(%x: tensor<4x8xf32>) -> tensor<6x10xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<4x8xf32> to tensor<6x10xf32>
  %e = tensor.empty() : tensor<6x10xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<6x10xf32>) outs(%e : tensor<6x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %z : f32
    linalg.yield %t : f32
  } -> tensor<6x10xf32>
  return %r : tensor<6x10xf32>
}

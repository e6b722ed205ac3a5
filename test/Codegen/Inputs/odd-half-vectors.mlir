// f16 rows of 7 and 5 elements per thread (vector<7xf16>, vector<5xf16>),
// computed in f32: LLVM 22's AMDGPU backend aborted on them (hsaco-odd-half-vectors.test).
func.func @exp_rows_of_7(%in: tensor<5x7xf16>) -> tensor<5x7xf16> {
  %e = tensor.empty() : tensor<5x7xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%in : tensor<5x7xf16>) outs(%e : tensor<5x7xf16>) {
  ^bb0(%x: f16, %o: f16):
    %v = math.exp %x : f16
    linalg.yield %v : f16
  } -> tensor<5x7xf16>
  return %r : tensor<5x7xf16>
}

func.func @broadcast_rows_of_5(%a: tensor<1x65xf16>, %b: tensor<33x13x1xf16>) -> tensor<33x13x1x65xf16> {
  %e = tensor.empty() : tensor<33x13x1x65xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k, l) -> (j, l)>, affine_map<(i, j, k, l) -> (k, i, j)>, affine_map<(i, j, k, l) -> (k, i, j, l)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%a, %b : tensor<1x65xf16>, tensor<33x13x1xf16>) outs(%e : tensor<33x13x1x65xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %m = arith.maximumf %x, %y : f16
    %s = arith.subf %x, %m : f16
    linalg.yield %s : f16
  } -> tensor<33x13x1x65xf16>
  return %r : tensor<33x13x1x65xf16>
}

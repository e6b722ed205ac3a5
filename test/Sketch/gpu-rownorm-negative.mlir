// Row reductions stay kernels of their own (gpu.reduce) when fusing them
// into the elementwise op that reads them would be wrong or unsupported:
// rows that are not a multiple of 64 elements whose reduction has no
// combiner ke-gpu-row-norm could split (here `(acc + x) * 2`: gpu.reduce
// cannot either), a reduction result that the function also returns,
// 16-bit elements. (Rows of other lengths with a combiner are fused:
// gpu-rownorm-row-kernel.mlir.)
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s --implicit-check-not=gpu.rownorm --implicit-check-not=ke.row_reduction

// CHECK: workload {{[0-9a-f]+}} linalg.generic
// CHECK-NEXT: // sketch gpu.elementwise
// CHECK: workload {{[0-9a-f]+}} linalg.generic
// CHECK-NEXT: // sketch gpu.elementwise
// CHECK: workload {{[0-9a-f]+}} linalg.generic
// CHECK-NEXT: // sketch gpu.reduce
// CHECK: workload {{[0-9a-f]+}} linalg.generic
// CHECK-NEXT: // sketch gpu.elementwise
// CHECK: workload {{[0-9a-f]+}} linalg.generic
// CHECK-NEXT: // sketch gpu.reduce
// CHECK: workload {{[0-9a-f]+}} linalg.generic
// CHECK-NEXT: // sketch gpu.elementwise

func.func @odd_rows(%x: tensor<16x96xf32>) -> tensor<16x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x96xf32>
  %er = tensor.empty() : tensor<16xf32>
  %ssi = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x96xf32>) outs(%ssi : tensor<16xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %v, %acc : f32
      %two = arith.constant 2.0 : f32
      %t = arith.mulf %s, %two : f32
      linalg.yield %t : f32
  } -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss : tensor<16x96xf32>, tensor<16xf32>) outs(%e : tensor<16x96xf32>) {
    ^bb0(%v: f32, %r0: f32, %o: f32):
      %y = arith.subf %v, %r0 : f32
      linalg.yield %y : f32
  } -> tensor<16x96xf32>
  return %r : tensor<16x96xf32>
}

func.func @result_escapes(%x: tensor<16x128xf32>) -> (tensor<16x128xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x128xf32>
  %er = tensor.empty() : tensor<16xf32>
  %ssi = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x128xf32>) outs(%ssi : tensor<16xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
  } -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss : tensor<16x128xf32>, tensor<16xf32>) outs(%e : tensor<16x128xf32>) {
    ^bb0(%v: f32, %r0: f32, %o: f32):
      %y = arith.subf %v, %r0 : f32
      linalg.yield %y : f32
  } -> tensor<16x128xf32>
  return %r, %ss : tensor<16x128xf32>, tensor<16xf32>
}

func.func @half(%x: tensor<16x128xf16>) -> tensor<16x128xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<16x128xf16>
  %er = tensor.empty() : tensor<16xf16>
  %ssi = linalg.fill ins(%zero : f16) outs(%er : tensor<16xf16>) -> tensor<16xf16>
  %ss = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x128xf16>) outs(%ssi : tensor<16xf16>) {
    ^bb0(%v: f16, %acc: f16):
      %s = arith.addf %v, %acc : f16
      linalg.yield %s : f16
  } -> tensor<16xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss : tensor<16x128xf16>, tensor<16xf16>) outs(%e : tensor<16x128xf16>) {
    ^bb0(%v: f16, %r0: f16, %o: f16):
      %y = arith.subf %v, %r0 : f16
      linalg.yield %y : f16
  } -> tensor<16x128xf16>
  return %r : tensor<16x128xf16>
}

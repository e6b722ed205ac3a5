// RUN: ke-opt %s --ke-fold-extensions-into-contractions --split-input-file | FileCheck %s
// RUN: ke-opt %s --ke-prepare-graph --split-input-file | FileCheck %s --check-prefix=PREPARED

// A bf16 nn.Linear as torch-mlir imports it: both operands extended to f32
// for an f32 matmul. The matmul reads the bf16 tensors (it extends them
// itself: the same products, accumulated in f32). In the prepared graph the
// weight's transpose then folds into the B map and the extensions are gone:
// one bf16 x bf16 -> f32 matmul, what gpu.mma takes.
// CHECK-LABEL: func.func @linear_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<64x32xbf16>, %[[W:.*]]: tensor<48x32xbf16>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[W]]
// CHECK: linalg.matmul ins(%[[X]], %[[T]] : tensor<64x32xbf16>, tensor<32x48xbf16>) outs(%{{.*}} : tensor<64x48xf32>)
// PREPARED-LABEL: func.func @linear_bf16
// PREPARED-NOT: arith.extf
// PREPARED-NOT: linalg.transpose
// PREPARED: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %{{.*}} : tensor<64x32xbf16>, tensor<48x32xbf16>) outs(%{{.*}} : tensor<64x48xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @linear_bf16(%x: tensor<64x32xbf16>, %w: tensor<48x32xbf16>) -> tensor<64x48xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<32x48xbf16>
  %t = linalg.transpose ins(%w : tensor<48x32xbf16>) outs(%0 : tensor<32x48xbf16>) permutation = [1, 0]
  %ex = tensor.empty() : tensor<64x32xf32>
  %x32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x32xbf16>) outs(%ex : tensor<64x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<64x32xf32>
  %ew = tensor.empty() : tensor<32x48xf32>
  %w32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<32x48xbf16>) outs(%ew : tensor<32x48xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<32x48xf32>
  %1 = tensor.empty() : tensor<64x48xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<64x48xf32>) -> tensor<64x48xf32>
  %3 = linalg.matmul ins(%x32, %w32 : tensor<64x32xf32>, tensor<32x48xf32>) outs(%2 : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %3 : tensor<64x48xf32>
}

// -----

// Only a pure extension folds: an input computed from the 16-bit values
// (here also scaled) stays, and so does one of a matmul with an f16 result
// (which would then multiply the bf16 values cast to f16).
// CHECK-LABEL: func.func @not_an_extension
// CHECK: %[[S:.*]] = linalg.generic
// CHECK: linalg.matmul ins(%[[S]], %{{.*}} : tensor<16x16xf32>, tensor<16x16xf32>)
// CHECK-LABEL: func.func @f16_result
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: linalg.matmul ins(%[[E]], %[[E]] : tensor<16x16xf32>, tensor<16x16xf32>) outs(%{{.*}} : tensor<16x16xf16>)
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_an_extension(%x: tensor<16x16xbf16>, %w: tensor<16x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %two = arith.constant 2.0 : f32
  %ex = tensor.empty() : tensor<16x16xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x16xbf16>) outs(%ex : tensor<16x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %m = arith.mulf %e, %two : f32
    linalg.yield %m : f32
  } -> tensor<16x16xf32>
  %r = linalg.matmul ins(%s, %w : tensor<16x16xf32>, tensor<16x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}
func.func @f16_result(%x: tensor<16x16xbf16>, %c: tensor<16x16xf16>) -> tensor<16x16xf16> {
  %ex = tensor.empty() : tensor<16x16xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x16xbf16>) outs(%ex : tensor<16x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %w = arith.extf %in : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<16x16xf32>
  %r = linalg.matmul ins(%e, %e : tensor<16x16xf32>, tensor<16x16xf32>) outs(%c : tensor<16x16xf16>) -> tensor<16x16xf16>
  return %r : tensor<16x16xf16>
}

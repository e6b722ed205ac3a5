// RUN: ke-opt %s --ke-fold-transposes-into-contractions --split-input-file | FileCheck %s

// nn.Linear as torch-mlir imports it: the weight's transpose becomes the
// matmul's B map, and the transpose is gone.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<64x32xf32>, %[[W:.*]]: tensor<48x32xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul indexing_maps = [#[[A]], #[[B]], #[[C]]] ins(%[[X]], %[[W]] : tensor<64x32xf32>, tensor<48x32xf32>)
func.func @linear(%x: tensor<64x32xf32>, %w: tensor<48x32xf32>) -> tensor<64x48xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<32x48xf32>
  %t = linalg.transpose ins(%w : tensor<48x32xf32>) outs(%0 : tensor<32x48xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<64x48xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<64x48xf32>) -> tensor<64x48xf32>
  %3 = linalg.matmul ins(%x, %t : tensor<64x32xf32>, tensor<32x48xf32>) outs(%2 : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %3 : tensor<64x48xf32>
}

// -----

// A transposed A operand, and a transpose that something else also reads:
// the transpose stays for its other user.
// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: func.func @lhs_shared
// CHECK-SAME: (%[[A:.*]]: tensor<32x64xf32>, %[[B:.*]]: tensor<32x48xf32>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[A]]
// CHECK: linalg.matmul indexing_maps = [#[[AT]], {{.*}}] ins(%[[A]], %[[B]] :
// CHECK: return {{.*}}, %[[T]]
func.func @lhs_shared(%a: tensor<32x64xf32>, %b: tensor<32x48xf32>) -> (tensor<64x48xf32>, tensor<64x32xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<64x32xf32>
  %t = linalg.transpose ins(%a : tensor<32x64xf32>) outs(%0 : tensor<64x32xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<64x48xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<64x48xf32>) -> tensor<64x48xf32>
  %3 = linalg.matmul ins(%t, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%2 : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %3, %t : tensor<64x48xf32>, tensor<64x32xf32>
}

// -----

// batch_matmul: a transpose of the last two dimensions folds (attention's
// K^T); one that moves the batch dimension does not.
// CHECK-DAG: #[[KT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @attention_scores
// CHECK-SAME: (%[[Q:.*]]: tensor<8x64x32xf32>, %[[K:.*]]: tensor<8x64x32xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.batch_matmul indexing_maps = [{{.*}}, #[[KT]], {{.*}}] ins(%[[Q]], %[[K]] :
func.func @attention_scores(%q: tensor<8x64x32xf32>, %k: tensor<8x64x32xf32>) -> tensor<8x64x64xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x32x64xf32>
  %kt = linalg.transpose ins(%k : tensor<8x64x32xf32>) outs(%0 : tensor<8x32x64xf32>) permutation = [0, 2, 1]
  %1 = tensor.empty() : tensor<8x64x64xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<8x64x64xf32>) -> tensor<8x64x64xf32>
  %3 = linalg.batch_matmul ins(%q, %kt : tensor<8x64x32xf32>, tensor<8x32x64xf32>) outs(%2 : tensor<8x64x64xf32>) -> tensor<8x64x64xf32>
  return %3 : tensor<8x64x64xf32>
}

// CHECK-LABEL: func.func @batch_moved
// CHECK: linalg.transpose
// CHECK: linalg.batch_matmul ins
func.func @batch_moved(%q: tensor<8x64x32xf32>, %k: tensor<32x8x64xf32>) -> tensor<8x64x64xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x32x64xf32>
  %kt = linalg.transpose ins(%k : tensor<32x8x64xf32>) outs(%0 : tensor<8x32x64xf32>) permutation = [1, 0, 2]
  %1 = tensor.empty() : tensor<8x64x64xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<8x64x64xf32>) -> tensor<8x64x64xf32>
  %3 = linalg.batch_matmul ins(%q, %kt : tensor<8x64x32xf32>, tensor<8x32x64xf32>) outs(%2 : tensor<8x64x64xf32>) -> tensor<8x64x64xf32>
  return %3 : tensor<8x64x64xf32>
}

// -----

// Nothing to do: the input comes back unchanged.
// CHECK-LABEL: func.func @plain
// CHECK-NEXT: arith.constant
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.matmul ins
// CHECK-NEXT: return
func.func @plain(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %1 = tensor.empty() : tensor<64x48xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<64x48xf32>) -> tensor<64x48xf32>
  %3 = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%2 : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %3 : tensor<64x48xf32>
}

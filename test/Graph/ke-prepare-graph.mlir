// RUN: ke-opt %s --ke-prepare-graph | FileCheck %s
// RUN: ke-opt workloads %s | FileCheck %s --check-prefix=WORKLOADS
// RUN: ke-opt workloads --no-prepare-graph %s | FileCheck %s --check-prefix=RAW
// RUN: ke-opt workloads %s %ke_src_root/benchmarks/suite/small/matmul_transposed_b.mlir | FileCheck %s --check-prefix=BOTH

// nn.Linear(32, 48) followed by ReLU, as torch-mlir imports it.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.broadcast
// CHECK: linalg.matmul indexing_maps
// CHECK: linalg.generic

// No data-movement workloads are left; the prepared matmul has the key of
// the hand-written transposed matmul of the small suite (one workload,
// counted twice, when both files are read).
// WORKLOADS-NOT: "op":"linalg.transpose"
// WORKLOADS-NOT: "op":"linalg.broadcast"
// WORKLOADS: "op":"linalg.matmul","kind":"contraction","count":1
// BOTH: "op":"linalg.matmul","kind":"contraction","count":2
// RAW: "op":"linalg.transpose","kind":"data-movement"
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @forward(%arg0: tensor<64x32xf32>, %w: tensor<48x32xf32>, %b: tensor<48xf32>) -> tensor<64x48xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<32x48xf32>
  %transposed = linalg.transpose ins(%w : tensor<48x32xf32>) outs(%0 : tensor<32x48xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<64x48xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<64x48xf32>) -> tensor<64x48xf32>
  %3 = linalg.matmul ins(%arg0, %transposed : tensor<64x32xf32>, tensor<32x48xf32>) outs(%2 : tensor<64x48xf32>) -> tensor<64x48xf32>
  %bc = linalg.broadcast ins(%b : tensor<48xf32>) outs(%1 : tensor<64x48xf32>) dimensions = [0]
  %4 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%3, %bc : tensor<64x48xf32>, tensor<64x48xf32>) outs(%1 : tensor<64x48xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %5 = arith.addf %in, %in_1 : f32
    %6 = arith.maximumf %5, %cst : f32
    linalg.yield %6 : f32
  } -> tensor<64x48xf32>
  return %4 : tensor<64x48xf32>
}

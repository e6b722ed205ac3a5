// ke-opt without a subcommand is an mlir-opt with ke's dialects and passes.
// RUN: ke-opt %s --linalg-generalize-named-ops --canonicalize | FileCheck %s
// RUN: ke-opt --list-passes | FileCheck %s --check-prefix=PASSES

// CHECK-LABEL: func.func @matmul
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
func.func @matmul(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %c: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// The passes of the verified CPU, NVPTX and ROCDL pipelines are all there.
// PASSES-DAG: --transform-interpreter
// PASSES-DAG: --one-shot-bufferize
// PASSES-DAG: --convert-linalg-to-loops
// PASSES-DAG: --convert-vector-to-llvm
// PASSES-DAG: --finalize-memref-to-llvm
// PASSES-DAG: --gpu-kernel-outlining
// PASSES-DAG: --nvvm-attach-target
// PASSES-DAG: --rocdl-attach-target
// PASSES-DAG: --convert-gpu-to-nvvm
// PASSES-DAG: --convert-gpu-to-rocdl
// PASSES-DAG: --gpu-module-to-binary
// PASSES-DAG: --reconcile-unrealized-casts

// RUN: ke-opt %s --ke-expand-math --split-input-file | FileCheck %s
// RUN: ke-opt %s --ke-expand-math=expand-bf16-casts=false --split-input-file | FileCheck %s --check-prefix=KEPT

// bf16 casts on vectors (a bf16 chain computed in f32, vectorized) become
// integer arithmetic: the AArch64 backend without the BF16 extension cannot
// select their vector element extracts.
// CHECK-LABEL: func.func @casts
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: arith.shli
// CHECK: arith.shrui
// KEPT-LABEL: func.func @casts
// KEPT: arith.extf
// KEPT: arith.truncf
func.func @casts(%x: vector<32xbf16>) -> vector<32xbf16> {
  %w = arith.extf %x : vector<32xbf16> to vector<32xf32>
  %s = arith.addf %w, %w : vector<32xf32>
  %r = arith.truncf %s : vector<32xf32> to vector<32xbf16>
  return %r : vector<32xbf16>
}

// -----

// Inside a linalg op the casts stay: a named op's body keeps the form the
// loop lowering expects.
// CHECK-LABEL: func.func @named
// CHECK: linalg.matmul
// CHECK-NOT: arith.shli
func.func @named(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

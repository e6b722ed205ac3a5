// RUN: ke-opt %s --ke-expand-math | FileCheck %s
// RUN: ke-opt %s --ke-expand-math=approximate-erf=false | FileCheck %s --check-prefix=GPU

// torch-mlir's `x ** 2` is math.fpowi with an i64 exponent: multiplications.
// CHECK-LABEL: func.func @square
// CHECK-NOT: math.fpowi
// CHECK: arith.mulf
// GPU-LABEL: func.func @square
// GPU-NOT: math.fpowi
func.func @square(%x: vector<4xf32>) -> vector<4xf32> {
  %two = arith.constant dense<2> : vector<4xi64>
  %r = math.fpowi %x, %two : vector<4xf32>, vector<4xi64>
  return %r : vector<4xf32>
}

// Exact GELU's erf: a polynomial on the CPU, kept for the GPU's libdevice.
// CHECK-LABEL: func.func @erf
// CHECK-NOT: math.erf
// CHECK: arith.constant dense<1.12837911>
// CHECK-NOT: math.erf
// CHECK: return
// GPU-LABEL: func.func @erf
// GPU: math.erf
func.func @erf(%x: vector<4xf32>) -> vector<4xf32> {
  %r = math.erf %x : vector<4xf32>
  return %r : vector<4xf32>
}

// Other math ops are convert-math-to-llvm's.
// CHECK-LABEL: func.func @tanh
// CHECK: math.tanh
func.func @tanh(%x: vector<4xf32>) -> vector<4xf32> {
  %r = math.tanh %x : vector<4xf32>
  return %r : vector<4xf32>
}

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

// math.absi on an n-D vector (convert-math-to-llvm lowers only scalars and
// 1-D vectors) becomes max(x, 0 - x); 1-D keeps llvm.intr.abs's path.
// CHECK-LABEL: func.func @absi
// CHECK-SAME: (%[[X:.*]]: vector<2x3xi32>, %[[Y:.*]]: vector<3xi32>)
// CHECK: %[[ZERO:.*]] = arith.constant dense<0> : vector<2x3xi32>
// CHECK: %[[NEG:.*]] = arith.subi %[[ZERO]], %[[X]] : vector<2x3xi32>
// CHECK: %[[ABS:.*]] = arith.maxsi %[[X]], %[[NEG]] : vector<2x3xi32>
// CHECK: math.absi %[[Y]] : vector<3xi32>
// GPU-LABEL: func.func @absi
// GPU: arith.maxsi
func.func @absi(%x: vector<2x3xi32>, %y: vector<3xi32>) -> (vector<2x3xi32>, vector<3xi32>) {
  %r = math.absi %x : vector<2x3xi32>
  %s = math.absi %y : vector<3xi32>
  return %r, %s : vector<2x3xi32>, vector<3xi32>
}

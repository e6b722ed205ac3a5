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

// The transcendental functions of activations, norms and losses: upstream's
// polynomials on the CPU (LLVM would call libm once per element), kept for
// the GPU's libdevice.
// CHECK-LABEL: func.func @activations
// CHECK-NOT: math.tanh
// CHECK-NOT: math.log
// CHECK-NOT: math.exp
// CHECK: return
// GPU-LABEL: func.func @activations
// GPU: math.tanh
// GPU: math.log
// GPU: math.log1p
// GPU: math.log2
// GPU: math.expm1
func.func @activations(%x: vector<4xf32>) -> vector<4xf32> {
  %t = math.tanh %x : vector<4xf32>
  %l = math.log %t : vector<4xf32>
  %p = math.log1p %l : vector<4xf32>
  %q = math.log2 %p : vector<4xf32>
  %r = math.expm1 %q : vector<4xf32>
  return %r : vector<4xf32>
}

// Other math ops (sin, f64 functions) are convert-math-to-llvm's.
// CHECK-LABEL: func.func @others
// CHECK: math.sin
// CHECK: math.tanh {{.*}} : vector<4xf64>
func.func @others(%x: vector<4xf32>, %y: vector<4xf64>) -> (vector<4xf32>, vector<4xf64>) {
  %s = math.sin %x : vector<4xf32>
  %t = math.tanh %y : vector<4xf64>
  return %s, %t : vector<4xf32>, vector<4xf64>
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

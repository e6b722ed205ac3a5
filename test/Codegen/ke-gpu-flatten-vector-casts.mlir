// RUN: ke-opt %s --ke-gpu-flatten-vector-casts | FileCheck %s

// A bf16 convolution's operands, extended to f32 as n-D vectors: each
// innermost row is cast on its own. 1-D casts are left alone.
// CHECK-LABEL: func.func @casts
// CHECK-SAME: (%[[A:.*]]: vector<1x3x1xbf16>, %[[B:.*]]: vector<2x4xf32>, %[[C:.*]]: vector<4xbf16>)
// CHECK-DAG: %[[Z1:.*]] = arith.constant dense<0.000000e+00> : vector<1x3x1xf32>
// CHECK-DAG: %[[Z2:.*]] = arith.constant dense<0.000000e+00> : vector<2x4xbf16>
// CHECK: %[[R0:.*]] = vector.extract %[[A]][0, 0] : vector<1xbf16> from vector<1x3x1xbf16>
// CHECK: %[[W0:.*]] = arith.extf %[[R0]] : vector<1xbf16> to vector<1xf32>
// CHECK: %[[I0:.*]] = vector.insert %[[W0]], %[[Z1]] [0, 0] : vector<1xf32> into vector<1x3x1xf32>
// CHECK: vector.extract %[[A]][0, 1]
// CHECK: vector.extract %[[A]][0, 2]
// CHECK: %[[S0:.*]] = vector.extract %[[B]][0] : vector<4xf32> from vector<2x4xf32>
// CHECK: arith.truncf %[[S0]] : vector<4xf32> to vector<4xbf16>
// CHECK: vector.extract %[[B]][1] : vector<4xf32> from vector<2x4xf32>
// CHECK: arith.extf %[[C]] : vector<4xbf16> to vector<4xf32>
func.func @casts(%a: vector<1x3x1xbf16>, %b: vector<2x4xf32>, %c: vector<4xbf16>) -> (vector<1x3x1xf32>, vector<2x4xbf16>, vector<4xf32>) {
  %x = arith.extf %a : vector<1x3x1xbf16> to vector<1x3x1xf32>
  %y = arith.truncf %b : vector<2x4xf32> to vector<2x4xbf16>
  %z = arith.extf %c : vector<4xbf16> to vector<4xf32>
  return %x, %y, %z : vector<1x3x1xf32>, vector<2x4xbf16>, vector<4xf32>
}

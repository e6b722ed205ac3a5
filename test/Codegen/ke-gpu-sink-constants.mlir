// RUN: ke-opt %s --ke-gpu-sink-constants | FileCheck %s

// Constants a launch uses, a vector constant among them, and a reshape of a
// host buffer are cloned into the launch body, so that outlining captures
// the buffer only. A value computed on the host from a buffer stays outside.
// CHECK-LABEL: func.func @kernel
// CHECK: gpu.launch
// CHECK-DAG: arith.constant dense<1.000000e+00> : vector<4xf32>
// CHECK-DAG: memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 4]
// CHECK: vector.store
// CHECK: gpu.terminator
func.func @kernel(%buf: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %ones = arith.constant dense<1.0> : vector<4xf32>
  %rows = memref.expand_shape %buf [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    vector.store %ones, %rows[%c0, %c0] : memref<2x4xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

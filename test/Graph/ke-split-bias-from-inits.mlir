// RUN: ke-opt %s --ke-split-bias-from-inits | FileCheck %s
// RUN: ke-opt workloads %s | FileCheck %s --check-prefix=WORKLOADS

// Conv2d's bias as torch-mlir imports it: a broadcast into the init. The
// convolution accumulates into a fill of zero, and a generic adds the bias
// through the broadcast's map; the broadcast is gone.
// CHECK-LABEL: func.func @conv_bias
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<8x3x3x3xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NOT: linalg.broadcast
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: %[[CONV:.*]] = linalg.conv_2d_nchw_fchw
// CHECK-SAME: outs(%[[FILL]] : tensor<1x8x6x6xf32>)
// CHECK: %[[ADD:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[ID:.*]], #[[CHANNEL:.*]], #[[ID]]]
// CHECK-SAME: ins(%[[CONV]], %[[B]] : tensor<1x8x6x6xf32>, tensor<8xf32>)
// CHECK: arith.addf
// CHECK: return %[[ADD]]

// The convolution (run channels-last by the graph preparation) is one
// workload, with its fill: no broadcast kernel.
// WORKLOADS-NOT: linalg.broadcast
// WORKLOADS: "op":"linalg.conv_2d_nhwc_hwcf",{{.*}}"fusible":[{{.*}}{"role":"producer","operand":2,"op":"linalg.fill"
func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x6x6xf32> {
  %e = tensor.empty() : tensor<1x8x6x6xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<1x8x6x6xf32>) dimensions = [0, 2, 3]
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) outs(%bb : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  return %y : tensor<1x8x6x6xf32>
}

// A matmul whose init is a broadcast row (addmm's shape) gets the same.
// CHECK-LABEL: func.func @matmul_bias
// CHECK: linalg.fill
// CHECK: %[[MM:.*]] = linalg.matmul
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[MM]], %{{.*}} : tensor<4x16xf32>, tensor<16xf32>)
func.func @matmul_bias(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x16xf32>
  %bb = linalg.broadcast ins(%bias : tensor<16xf32>) outs(%e : tensor<4x16xf32>) dimensions = [0]
  %y = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%bb : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// Max pooling does not add into its init: the broadcast stays its init.
// CHECK-LABEL: func.func @max_pool_from_broadcast
// CHECK: %[[BB:.*]] = linalg.broadcast
// CHECK: linalg.pooling_nchw_max
// CHECK-SAME: outs(%[[BB]]
// CHECK-NOT: linalg.generic
func.func @max_pool_from_broadcast(%x: tensor<1x2x8x8xf32>, %floor: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %bb = linalg.broadcast ins(%floor : tensor<2xf32>) outs(%e : tensor<1x2x4x4xf32>) dimensions = [0, 2, 3]
  %y = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %window : tensor<1x2x8x8xf32>, tensor<2x2xf32>) outs(%bb : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// Integer accumulation is left alone (the pass is for float biases).
// CHECK-LABEL: func.func @integer_matmul
// CHECK: %[[BB:.*]] = linalg.broadcast
// CHECK: linalg.matmul
// CHECK-SAME: outs(%[[BB]]
func.func @integer_matmul(%a: tensor<4x8xi32>, %b: tensor<8x16xi32>, %bias: tensor<16xi32>) -> tensor<4x16xi32> {
  %e = tensor.empty() : tensor<4x16xi32>
  %bb = linalg.broadcast ins(%bias : tensor<16xi32>) outs(%e : tensor<4x16xi32>) dimensions = [0]
  %y = linalg.matmul ins(%a, %b : tensor<4x8xi32>, tensor<8x16xi32>) outs(%bb : tensor<4x16xi32>) -> tensor<4x16xi32>
  return %y : tensor<4x16xi32>
}

// An init that is no broadcast (a fill) is left alone.
// CHECK-LABEL: func.func @fill_init
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: linalg.matmul
// CHECK-SAME: outs(%[[FILL]]
// CHECK-NOT: linalg.generic
func.func @fill_init(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

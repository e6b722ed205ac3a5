// RUN: ke-opt %s --ke-fold-broadcasts-into-consumers --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A bias broadcast over the rows, read by the bias add: the add reads the
// bias through (d0, d1) -> (d1), and the broadcast is gone.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @bias_add
// CHECK-SAME: (%[[X:.*]]: tensor<64x48xf32>, %[[B:.*]]: tensor<48xf32>)
// CHECK-NOT: linalg.broadcast
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]]
// CHECK-SAME: ins(%[[X]], %[[B]] : tensor<64x48xf32>, tensor<48xf32>)
func.func @bias_add(%x: tensor<64x48xf32>, %b: tensor<48xf32>) -> tensor<64x48xf32> {
  %e = tensor.empty() : tensor<64x48xf32>
  %bb = linalg.broadcast ins(%b : tensor<48xf32>) outs(%e : tensor<64x48xf32>) dimensions = [0]
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %bb : tensor<64x48xf32>, tensor<64x48xf32>) outs(%e : tensor<64x48xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s = arith.addf %in, %in_0 : f32
    linalg.yield %s : f32
  } -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}

// -----

// A transposed operand of an elementwise op, read through a broadcast-like
// map already: maps compose.
// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @transposed_input
// CHECK-SAME: (%[[X:.*]]: tensor<64x48xf32>, %[[Y:.*]]: tensor<48x64xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[T]], {{.*}}]
// CHECK-SAME: ins(%[[X]], %[[Y]] : tensor<64x48xf32>, tensor<48x64xf32>)
func.func @transposed_input(%x: tensor<64x48xf32>, %y: tensor<48x64xf32>) -> tensor<64x48xf32> {
  %e = tensor.empty() : tensor<64x48xf32>
  %yt = linalg.transpose ins(%y : tensor<48x64xf32>) outs(%e : tensor<64x48xf32>) permutation = [1, 0]
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %yt : tensor<64x48xf32>, tensor<64x48xf32>) outs(%e : tensor<64x48xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s = arith.mulf %in, %in_0 : f32
    linalg.yield %s : f32
  } -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}

// -----

// A conv bias broadcast into the conv's init stays (the conv is no
// elementwise generic); so does a broadcast a reduction reads.
// CHECK-LABEL: func.func @conv_bias
// CHECK: linalg.broadcast
// CHECK: linalg.conv_2d_nchw_fchw
func.func @conv_bias(%x: tensor<1x3x16x16xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x14x14xf32> {
  %e = tensor.empty() : tensor<1x8x14x14xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<1x8x14x14xf32>) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x16x16xf32>, tensor<8x3x3x3xf32>) outs(%bb : tensor<1x8x14x14xf32>) -> tensor<1x8x14x14xf32>
  return %c : tensor<1x8x14x14xf32>
}

// CHECK-LABEL: func.func @reduction_reader
// CHECK: linalg.broadcast
// CHECK: linalg.generic
func.func @reduction_reader(%b: tensor<48xf32>, %acc: tensor<48xf32>) -> tensor<48xf32> {
  %e = tensor.empty() : tensor<64x48xf32>
  %bb = linalg.broadcast ins(%b : tensor<48xf32>) outs(%e : tensor<64x48xf32>) dimensions = [0]
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%bb : tensor<64x48xf32>) outs(%acc : tensor<48xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<48xf32>
  return %r : tensor<48xf32>
}

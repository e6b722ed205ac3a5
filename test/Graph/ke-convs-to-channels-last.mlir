// RUN: ke-opt %s --ke-convs-to-channels-last --split-input-file | FileCheck %s
// RUN: ke-opt %s --ke-prepare-graph --split-input-file | FileCheck %s --check-prefix=PREP

// A strided NCHW convolution (torch-mlir's nn.Conv2d) runs channels-last:
// input and filter transposed, a fill of the same value as its init, the
// result transposed back to NCHW for the bias-and-ReLU tail.
// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x18x18xf32>, %[[W:.*]]: tensor<16x8x3x3xf32>
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<2x8x18x18xf32>) outs(%{{.*}} : tensor<2x18x18x8xf32>) permutation = [0, 2, 3, 1]
// CHECK: %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<16x8x3x3xf32>) outs(%{{.*}} : tensor<3x3x8x16xf32>) permutation = [2, 3, 1, 0]
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x8x8x16xf32>)
// CHECK: %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%[[XT]], %[[WT]] : {{.*}}) outs(%[[INIT]] : tensor<2x8x8x16xf32>)
// CHECK: %[[BACK:.*]] = linalg.transpose ins(%[[CONV]] : tensor<2x8x8x16xf32>) outs(%{{.*}} : tensor<2x16x8x8xf32>) permutation = [0, 3, 1, 2]
// CHECK: linalg.generic {{.*}} ins(%[[BACK]], %{{.*}} : tensor<2x16x8x8xf32>, tensor<16xf32>)
// The graph preparation folds the transpose back into the tail, which
// reads the channels-last result through its indexing map.
// PREP: #[[NHWC:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
// PREP-LABEL: func.func @conv2d
// PREP: %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf
// PREP-NOT: linalg.transpose
// PREP: linalg.generic {indexing_maps = [#[[NHWC]], {{.*}}} ins(%[[CONV]], %{{.*}} : tensor<2x8x8x16xf32>, tensor<16xf32>) outs(%{{.*}} : tensor<2x16x8x8xf32>)
func.func @conv2d(%x: tensor<2x8x18x18xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>) -> tensor<2x16x8x8xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x8x8xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<2x8x18x18xf32>, tensor<16x8x3x3xf32>) outs(%f : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %e2 = tensor.empty() : tensor<2x16x8x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %b : tensor<2x16x8x8xf32>, tensor<16xf32>) outs(%e2 : tensor<2x16x8x8xf32>) {
  ^bb0(%in: f32, %bi: f32, %out: f32):
    %s = arith.addf %in, %bi : f32
    %z = arith.maximumf %s, %c : f32
    linalg.yield %z : f32
  } -> tensor<2x16x8x8xf32>
  return %y : tensor<2x16x8x8xf32>
}

// -----

// 1-D and 3-D convolutions with dilations; an init that is not a fill is
// transposed like the input.
// CHECK-LABEL: func.func @conv1d
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x4x16xf32>) outs(%{{.*}} : tensor<1x16x4xf32>) permutation = [0, 2, 1]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<6x4x3xf32>) outs(%{{.*}} : tensor<3x4x6xf32>) permutation = [2, 1, 0]
// CHECK: %[[INIT:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x6x12xf32>) outs(%{{.*}} : tensor<1x12x6xf32>) permutation = [0, 2, 1]
// CHECK: linalg.conv_1d_nwc_wcf {dilations = dense<2> : vector<1xi64>, strides = dense<1> : vector<1xi64>} {{.*}} outs(%[[INIT]] : tensor<1x12x6xf32>)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x12x6xf32>) outs(%{{.*}} : tensor<1x6x12xf32>) permutation = [0, 2, 1]
func.func @conv1d(%x: tensor<1x4x16xf32>, %w: tensor<6x4x3xf32>, %init: tensor<1x6x12xf32>) -> tensor<1x6x12xf32> {
  %r = linalg.conv_1d_ncw_fcw {dilations = dense<2> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%x, %w : tensor<1x4x16xf32>, tensor<6x4x3xf32>) outs(%init : tensor<1x6x12xf32>) -> tensor<1x6x12xf32>
  return %r : tensor<1x6x12xf32>
}

// CHECK-LABEL: func.func @conv3d
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x2x6x6x6xf32>) outs(%{{.*}} : tensor<1x6x6x6x2xf32>) permutation = [0, 2, 3, 4, 1]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<4x2x3x3x3xf32>) outs(%{{.*}} : tensor<3x3x3x2x4xf32>) permutation = [2, 3, 4, 1, 0]
// CHECK: linalg.conv_3d_ndhwc_dhwcf {{.*}} -> tensor<1x4x4x4x4xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x4x4x4x4xf32>) outs(%{{.*}} : tensor<1x4x4x4x4xf32>) permutation = [0, 4, 1, 2, 3]
func.func @conv3d(%x: tensor<1x2x6x6x6xf32>, %w: tensor<4x2x3x3x3xf32>) -> tensor<1x4x4x4x4xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4x4xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<1x4x4x4x4xf32>) -> tensor<1x4x4x4x4xf32>
  %r = linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : vector<3xi64>, strides = dense<1> : vector<3xi64>} ins(%x, %w : tensor<1x2x6x6x6xf32>, tensor<4x2x3x3x3xf32>) outs(%f : tensor<1x4x4x4x4xf32>) -> tensor<1x4x4x4x4xf32>
  return %r : tensor<1x4x4x4x4xf32>
}

// -----

// Channels-last convolutions and dynamic shapes stay as they are.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: linalg.transpose
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK: linalg.conv_2d_nchw_fchw
func.func @untouched(%x: tensor<1x6x6x2xf32>, %w: tensor<3x3x2x4xf32>, %i: tensor<1x4x4x4xf32>,
                     %dx: tensor<?x2x6x6xf32>, %dw: tensor<4x2x3x3xf32>, %di: tensor<?x4x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<?x4x4x4xf32>) {
  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x6x6x2xf32>, tensor<3x3x2x4xf32>) outs(%i : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %d = linalg.conv_2d_nchw_fchw ins(%dx, %dw : tensor<?x2x6x6xf32>, tensor<4x2x3x3xf32>) outs(%di : tensor<?x4x4x4xf32>) -> tensor<?x4x4x4xf32>
  return %r, %d : tensor<1x4x4x4xf32>, tensor<?x4x4x4xf32>
}

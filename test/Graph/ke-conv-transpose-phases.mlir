// RUN: ke-opt %s --split-input-file --ke-conv-transpose-phases | FileCheck %s

// A 1-D ConvTranspose of stride 2, kernel 3, padding 1 as torch-mlir
// imports it: the input spread out with zeros (offset 1), a stride-1
// convolution. Phase 0 (even outputs) meets tap 1 only, phase 1 taps 0
// and 2; both read the input unshifted, so they share one zero-padded
// copy of it (5 + 1 wide) made from the input transposed channels-last, each a dense convolution into a
// fill of the init's value, transposed to channels-first, and one gather
// interleaves them.
// CHECK-DAG: #[[TAP1:.*]] = affine_map<(d0, d1, d2) -> (d2, d1, d0 * 2 + 1)>
// CHECK-DAG: #[[TAPS02:.*]] = affine_map<(d0, d1, d2) -> (d2, d1, d0 * 2)>
// CHECK-LABEL: func.func @k3_s2
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x5xf32>, %[[W:.*]]: tensor<6x4x3xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<2x4x5xf32>) outs(%{{.*}} : tensor<2x5x4xf32>) permutation = [0, 2, 1]
// CHECK: %[[XE:.*]] = tensor.empty() : tensor<2x6x4xf32>
// CHECK: %[[XP:.*]] = linalg.generic
// CHECK-SAME: outs(%[[XE]] : tensor<2x6x4xf32>)
// CHECK: tensor.extract %[[XT]]
// CHECK: %[[F0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x5x6xf32>)
// CHECK: %[[W0:.*]] = linalg.generic {indexing_maps = [#[[TAP1]], #{{.*}}]
// CHECK-SAME: ins(%[[W]] : tensor<6x4x3xf32>) outs(%{{.*}} : tensor<1x4x6xf32>)
// CHECK: %[[C0:.*]] = linalg.conv_1d_nwc_wcf
// CHECK-SAME: ins(%[[XP]], %[[W0]] : tensor<2x6x4xf32>, tensor<1x4x6xf32>) outs(%[[F0]] : tensor<2x5x6xf32>)
// CHECK: %[[W1:.*]] = linalg.generic {indexing_maps = [#[[TAPS02]], #{{.*}}]
// CHECK-SAME: outs(%{{.*}} : tensor<2x4x6xf32>)
// CHECK: %[[C1:.*]] = linalg.conv_1d_nwc_wcf
// CHECK-SAME: ins(%[[XP]], %[[W1]] : tensor<2x6x4xf32>, tensor<2x4x6xf32>)
// CHECK: %[[T0:.*]] = linalg.transpose ins(%[[C0]] : tensor<2x5x6xf32>) outs(%{{.*}} : tensor<2x6x5xf32>) permutation = [0, 2, 1]
// CHECK: %[[T1:.*]] = linalg.transpose ins(%[[C1]] : tensor<2x5x6xf32>) outs(%{{.*}} : tensor<2x6x5xf32>) permutation = [0, 2, 1]
// CHECK: %[[OUT:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<2x6x10xf32>)
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: tensor.extract %[[T1]]
// CHECK: tensor.extract %[[T0]]
// CHECK: arith.select
// CHECK: return %[[OUT]]
func.func @k3_s2(%x: tensor<2x4x5xf32>, %w: tensor<6x4x3xf32>) -> tensor<2x6x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x12xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x12xf32>) -> tensor<2x4x12xf32>
  %s = tensor.insert_slice %x into %f[0, 0, 1] [2, 4, 5] [1, 1, 2] : tensor<2x4x5xf32> into tensor<2x4x12xf32>
  %oe = tensor.empty() : tensor<2x6x10xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x6x10xf32>) -> tensor<2x6x10xf32>
  %c = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%s, %w : tensor<2x4x12xf32>, tensor<6x4x3xf32>) outs(%of : tensor<2x6x10xf32>) -> tensor<2x6x10xf32>
  return %c : tensor<2x6x10xf32>
}

// -----

// Kernel 2, stride 2, no padding (an upsampling layer): each output phase
// meets one tap, unshifted, and reads no more than the input, so both
// convolutions read the transposed input itself, with no copy.
// CHECK-LABEL: func.func @k2_s2_no_copy
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x5xf32>
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]]
// CHECK-NOT: tensor.extract
// CHECK: linalg.conv_1d_nwc_wcf {{.*}} ins(%[[XT]], %{{.*}} : tensor<1x5x3xf32>, tensor<1x3x4xf32>)
// CHECK: linalg.conv_1d_nwc_wcf {{.*}} ins(%[[XT]], %{{.*}} : tensor<1x5x3xf32>, tensor<1x3x4xf32>)
func.func @k2_s2_no_copy(%x: tensor<1x3x5xf32>, %w: tensor<4x3x2xf32>) -> tensor<1x4x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x11xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x11xf32>) -> tensor<1x3x11xf32>
  %s = tensor.insert_slice %x into %f[0, 0, 1] [1, 3, 5] [1, 1, 2] : tensor<1x3x5xf32> into tensor<1x3x11xf32>
  %oe = tensor.empty() : tensor<1x4x10xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x4x10xf32>) -> tensor<1x4x10xf32>
  %c = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%s, %w : tensor<1x3x11xf32>, tensor<4x3x2xf32>) outs(%of : tensor<1x4x10xf32>) -> tensor<1x4x10xf32>
  return %c : tensor<1x4x10xf32>
}

// -----

// Dilation 3, stride 2, kernel 3 (tap k at o + 3k): phase 0 meets taps 0
// and 2 (input shifted by -2: a padded copy), phase 1 tap 1 (unshifted:
// the transposed input itself), each a convolution of dilation
// 3 / gcd(3, 2) = 3.
// CHECK-DAG: #[[EVEN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1, d0 * 2)>
// CHECK-DAG: #[[ODD:.*]] = affine_map<(d0, d1, d2) -> (d2, d1, d0 * 2 + 1)>
// CHECK-LABEL: func.func @dilated
// CHECK: %[[XT:.*]] = linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[EVEN]], #{{.*}}]{{.*}} outs(%{{.*}} : tensor<2x2x3xf32>)
// CHECK: linalg.conv_1d_nwc_wcf {dilations = dense<3> : vector<1xi64>, strides = dense<1> : vector<1xi64>} {{.*}} -> tensor<1x6x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ODD]], #{{.*}}]{{.*}} outs(%{{.*}} : tensor<1x2x3xf32>)
// CHECK: linalg.conv_1d_nwc_wcf {dilations = dense<3> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%[[XT]], {{.*}} -> tensor<1x5x3xf32>
func.func @dilated(%x: tensor<1x2x5xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x3x11xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x17xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x17xf32>) -> tensor<1x2x17xf32>
  %s = tensor.insert_slice %x into %f[0, 0, 4] [1, 2, 5] [1, 1, 2] : tensor<1x2x5xf32> into tensor<1x2x17xf32>
  %oe = tensor.empty() : tensor<1x3x11xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x3x11xf32>) -> tensor<1x3x11xf32>
  %c = linalg.conv_1d_ncw_fcw {dilations = dense<3> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%s, %w : tensor<1x2x17xf32>, tensor<3x2x3xf32>) outs(%of : tensor<1x3x11xf32>) -> tensor<1x3x11xf32>
  return %c : tensor<1x3x11xf32>
}

// -----

// A filter narrower than the stride (1 wide, stride 3): phases 1 and 2 meet
// no input pixel and are the init's value alone (here 0.5, a bias), with no
// convolution; phase 0 is a 1-tap convolution.
// CHECK-LABEL: func.func @no_taps
// CHECK-COUNT-1: linalg.conv_1d_nwc_wcf
// CHECK-NOT: linalg.conv
// CHECK: %[[OUT:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<1x2x7xf32>)
// CHECK-COUNT-3: tensor.extract
// CHECK: return %[[OUT]]
func.func @no_taps(%x: tensor<1x2x3xf32>, %w: tensor<2x2x1xf32>) -> tensor<1x2x7xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<1x2x7xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x7xf32>) -> tensor<1x2x7xf32>
  %s = tensor.insert_slice %x into %f[0, 0, 0] [1, 2, 3] [1, 1, 3] : tensor<1x2x3xf32> into tensor<1x2x7xf32>
  %oe = tensor.empty() : tensor<1x2x7xf32>
  %of = linalg.fill ins(%half : f32) outs(%oe : tensor<1x2x7xf32>) -> tensor<1x2x7xf32>
  %c = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%s, %w : tensor<1x2x7xf32>, tensor<2x2x1xf32>) outs(%of : tensor<1x2x7xf32>) -> tensor<1x2x7xf32>
  return %c : tensor<1x2x7xf32>
}

// -----

// 2-D, kernel 4, stride 2, padding 1 (KernelBench level2/5's shape, made
// small): the even and odd phases of each dimension read the input at
// different shifts, so four shifted inputs, four 2 x 2 convolutions.
// CHECK-LABEL: func.func @k4_s2_2d
// CHECK-COUNT-4: linalg.conv_2d_nhwc_hwcf {{.*}} tensor<1x3x3x3xf32>
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @k4_s2_2d(%x: tensor<1x2x3x3xf32>, %w: tensor<3x2x4x4xf32>) -> tensor<1x3x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x9x9xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x9x9xf32>) -> tensor<1x2x9x9xf32>
  %s = tensor.insert_slice %x into %f[0, 0, 2, 2] [1, 2, 3, 3] [1, 1, 2, 2] : tensor<1x2x3x3xf32> into tensor<1x2x9x9xf32>
  %oe = tensor.empty() : tensor<1x3x6x6xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%s, %w : tensor<1x2x9x9xf32>, tensor<3x2x4x4xf32>) outs(%of : tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32>
  return %c : tensor<1x3x6x6xf32>
}

// -----

// Left alone: zeros are not what the input is spread into (a 1.0 fill
// would add 1.0 times every tap), so the inserted values are not the only
// ones the convolution reads.
// CHECK-LABEL: func.func @ones_around
// CHECK: tensor.insert_slice
// CHECK: linalg.conv_1d_ncw_fcw
func.func @ones_around(%x: tensor<1x2x3xf32>, %w: tensor<2x2x3xf32>) -> tensor<1x2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x2x7xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<1x2x7xf32>) -> tensor<1x2x7xf32>
  %s = tensor.insert_slice %x into %f[0, 0, 1] [1, 2, 3] [1, 1, 2] : tensor<1x2x3xf32> into tensor<1x2x7xf32>
  %oe = tensor.empty() : tensor<1x2x5xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x5xf32>) -> tensor<1x2x5xf32>
  %c = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%s, %w : tensor<1x2x7xf32>, tensor<2x2x3xf32>) outs(%of : tensor<1x2x5xf32>) -> tensor<1x2x5xf32>
  return %c : tensor<1x2x5xf32>
}

// -----

// Left alone: a strided convolution over the spread-out input (the phases
// above assume stride 1), and an init that is no fill.
// CHECK-LABEL: func.func @strided_conv
// CHECK: tensor.insert_slice
// CHECK: linalg.conv_1d_ncw_fcw
// CHECK-LABEL: func.func @init_not_fill
// CHECK: tensor.insert_slice
// CHECK: linalg.conv_1d_ncw_fcw
func.func @strided_conv(%x: tensor<1x2x3xf32>, %w: tensor<2x2x3xf32>) -> tensor<1x2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x7xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x7xf32>) -> tensor<1x2x7xf32>
  %s = tensor.insert_slice %x into %f[0, 0, 1] [1, 2, 3] [1, 1, 2] : tensor<1x2x3xf32> into tensor<1x2x7xf32>
  %oe = tensor.empty() : tensor<1x2x3xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %c = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<2> : vector<1xi64>} ins(%s, %w : tensor<1x2x7xf32>, tensor<2x2x3xf32>) outs(%of : tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  return %c : tensor<1x2x3xf32>
}
func.func @init_not_fill(%x: tensor<1x2x3xf32>, %w: tensor<2x2x3xf32>, %init: tensor<1x2x5xf32>) -> tensor<1x2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x7xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x7xf32>) -> tensor<1x2x7xf32>
  %s = tensor.insert_slice %x into %f[0, 0, 1] [1, 2, 3] [1, 1, 2] : tensor<1x2x3xf32> into tensor<1x2x7xf32>
  %c = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%s, %w : tensor<1x2x7xf32>, tensor<2x2x3xf32>) outs(%init : tensor<1x2x5xf32>) -> tensor<1x2x5xf32>
  return %c : tensor<1x2x5xf32>
}

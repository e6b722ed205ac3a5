// RUN: ke-opt %s --ke-widen-accumulators --split-input-file | FileCheck %s

// A bf16 row sum from a zero fill: the fill becomes f32, each term is
// extended before the f32 addition, and the sum is truncated back.
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: (%[[X:.*]]: tensor<8x4096xbf16>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<8x4096xbf16>) outs(%[[FILL]] : tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[IN]], %[[IN]] : bf16
// CHECK-NEXT: %[[WIDE:.*]] = arith.extf %[[SQ]] : bf16 to f32
// CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[WIDE]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[ADD]] : f32
// CHECK: %[[NARROW:.*]] = linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<8xf32>) outs(%{{.*}} : tensor<8xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %[[NARROW]]
func.func @row_sum(%x: tensor<8x4096xbf16>) -> tensor<8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<8xbf16>
  %f = linalg.fill ins(%zero : bf16) outs(%e : tensor<8xbf16>) -> tensor<8xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4096xbf16>) outs(%f : tensor<8xbf16>) {
    ^bb0(%in: bf16, %acc: bf16):
      %sq = arith.mulf %in, %in : bf16
      %s = arith.addf %sq, %acc : bf16
      linalg.yield %s : bf16
  } -> tensor<8xbf16>
  return %r : tensor<8xbf16>
}

// -----

// An init that is not a fill is extended elementwise.
// CHECK-LABEL: func.func @sum_into_bias
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<8xf16>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @sum_into_bias(%x: tensor<8x64xf16>, %bias: tensor<8xf16>) -> tensor<8xf16> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf16>) outs(%bias : tensor<8xf16>) {
    ^bb0(%in: f16, %acc: f16):
      %s = arith.addf %in, %acc : f16
      linalg.yield %s : f16
  } -> tensor<8xf16>
  return %r : tensor<8xf16>
}

// -----

// Left alone: a bf16 maximum (exact in any precision), an f32 sum.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @left_alone(%x: tensor<8x64xbf16>, %m: tensor<8xbf16>, %y: tensor<8x64xf32>, %s: tensor<8xf32>) -> (tensor<8xbf16>, tensor<8xf32>) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xbf16>) outs(%m : tensor<8xbf16>) {
    ^bb0(%in: bf16, %acc: bf16):
      %v = arith.maximumf %in, %acc : bf16
      linalg.yield %v : bf16
  } -> tensor<8xbf16>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<8x64xf32>) outs(%s : tensor<8xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %v = arith.addf %in, %acc : f32
      linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r, %t : tensor<8xbf16>, tensor<8xf32>
}

// -----

// Average pooling's window sums in bf16: the same named op into an f32
// init, then truncf.
// CHECK-LABEL: func.func @avg_pool_sum
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x4x8x8xf32>)
// CHECK: %[[SUM:.*]] = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2x4x16x16xbf16>, tensor<2x2xbf16>) outs(%[[FILL]] : tensor<2x4x8x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x4x8x8xf32>) outs(%{{.*}} : tensor<2x4x8x8xbf16>)
// CHECK: arith.truncf
func.func @avg_pool_sum(%x: tensor<2x4x16x16xbf16>) -> tensor<2x4x8x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %w = tensor.empty() : tensor<2x2xbf16>
  %e = tensor.empty() : tensor<2x4x8x8xbf16>
  %f = linalg.fill ins(%zero : bf16) outs(%e : tensor<2x4x8x8xbf16>) -> tensor<2x4x8x8xbf16>
  %r = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w : tensor<2x4x16x16xbf16>, tensor<2x2xbf16>) outs(%f : tensor<2x4x8x8xbf16>) -> tensor<2x4x8x8xbf16>
  return %r : tensor<2x4x8x8xbf16>
}

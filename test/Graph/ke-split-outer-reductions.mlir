// RUN: ke-opt %s --ke-split-outer-reductions --split-input-file | FileCheck %s

// A batch norm's per-channel sum over (batch, rows, columns): stage 1 sums
// each (batch, channel) row of 16 x 16 from zero, stage 2 adds the batch's
// partials into the original init.
// CHECK-LABEL: func.func @channel_sum
// CHECK-SAME: (%[[X:.*]]: tensor<4x8x16x16xf32>, %[[INIT:.*]]: tensor<8xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: %[[PARTIAL:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK-SAME: ins(%[[X]] : tensor<4x8x16x16xf32>) outs(%[[FILL]] : tensor<4x8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK-SAME: ins(%[[PARTIAL]] : tensor<4x8xf32>) outs(%[[INIT]] : tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[P]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[SUM]]
func.func @channel_sum(%x: tensor<4x8x16x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<4x8x16x16xf32>) outs(%init : tensor<8xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %sq = arith.mulf %in, %in : f32
      %s = arith.addf %sq, %acc : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A maximum starts its partials from -inf.
// CHECK-LABEL: func.func @channel_max
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: arith.maximumf
func.func @channel_max(%x: tensor<4x8x256xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, k) -> (n, c, k)>, affine_map<(n, c, k) -> (c)>], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x : tensor<4x8x256xf32>) outs(%init : tensor<8xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Left alone: a short trailing reduction, a body that reads loop indices,
// and a reduction that is already innermost.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
func.func @left_alone(%x: tensor<4x8x16xf32>, %y: tensor<4x8x256xf32>, %init: tensor<8xf32>, %rows: tensor<4x8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<4x8xf32>) {
  %short = linalg.generic {indexing_maps = [affine_map<(n, c, k) -> (n, c, k)>, affine_map<(n, c, k) -> (c)>], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x : tensor<4x8x16xf32>) outs(%init : tensor<8xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  %indexed = linalg.generic {indexing_maps = [affine_map<(n, c, k) -> (n, c, k)>, affine_map<(n, c, k) -> (c)>], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%y : tensor<4x8x256xf32>) outs(%init : tensor<8xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %i = linalg.index 2 : index
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      %m = arith.mulf %in, %f : f32
      %s = arith.addf %m, %acc : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  %inner = linalg.generic {indexing_maps = [affine_map<(n, c, k) -> (n, c, k)>, affine_map<(n, c, k) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y : tensor<4x8x256xf32>) outs(%rows : tensor<4x8xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %short, %indexed, %inner : tensor<8xf32>, tensor<8xf32>, tensor<4x8xf32>
}

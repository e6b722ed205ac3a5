// gpu.reduce with a fused consumer (a mean: the row sums scaled).
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.reduce | FileCheck %s

// A fused consumer (the mean's scaling) is tiled to the blocks with the
// anchor fused into it, and applies per row after the combine (the combine
// is fused into the consumer's one-thread-per-row forall): it must neither
// stay outside the launch nor see the threads' partial sums.
// CHECK-LABEL: // -----// workload {{.*}} linalg.reduce
// CHECK-NEXT: // sketch gpu.reduce
// CHECK: [[ANCHOR:%op[0-9]+]] = transform.structured.match ops{["linalg.reduce"]} attributes {ke.anchor}
// CHECK: [[CONSUMER:%op[0-9]+]] = transform.structured.match attributes {ke.consumer}
// CHECK: [[ROWS:%op[0-9]+]], [[BLOCKS:%forall[0-9]+]] = transform.structured.tile_using_forall [[CONSUMER]] tile_sizes [1] (mapping = [#gpu.block<x>])
// CHECK: [[FUSED:%op[0-9]+]], %{{.*}} = transform.structured.fuse_into_containing_op [[ANCHOR]] into [[BLOCKS]]
// CHECK: %{{.*}}, %{{.*}}, [[COMBINE:%combine[0-9]+]], %{{.*}} = transform.structured.tile_reduction_using_forall [[FUSED]]
// CHECK: %{{.*}}, [[PERROW:%forall[0-9]+]] = transform.structured.tile_using_forall [[ROWS]] tile_sizes [1] (mapping = [#gpu.thread<x>])
// CHECK: transform.structured.fuse_into_containing_op [[COMBINE]] into [[PERROW]]
func.func @row_mean(%x: tensor<64x512xf32>) -> tensor<64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.reduce ins(%x : tensor<64x512xf32>) outs(%c : tensor<64xf32>) dimensions = [1]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  %n = arith.constant 0.001953125 : f32
  %m = linalg.generic {indexing_maps = [affine_map<(a) -> (a)>, affine_map<(a) -> (a)>], iterator_types = ["parallel"]}
      ins(%r : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %y = arith.mulf %v, %n : f32
      linalg.yield %y : f32
  } -> tensor<64xf32>
  return %m : tensor<64xf32>
}

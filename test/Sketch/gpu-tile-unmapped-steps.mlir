// A channels-first 3-D convolution maps its last three parallel loops
// (depth, rows, columns) to threads; the batch and the output channels run
// one step at a time in each thread. With a consumer fused at thread level,
// the consumer steps through them too and the anchor is fused into each
// step, so a thread accumulates one register tile. Before, the consumer was
// vectorized whole: a 16 x 64 x (2 x 2) accumulator per thread in
// KernelBench's Conv3d problems, and ptxas ran for minutes.
// (--no-prepare-graph: the preparation would run it channels-last.)
// RUN: ke-opt sketches %s --no-prepare-graph --target cuda:sm_90 --sketch gpu.tile | FileCheck %s
// RUN: ke-opt compile %s --no-prepare-graph --target cuda:sm_90 --emit=scheduled -o - 2>&1 | FileCheck %s --check-prefix=SCHED

// CHECK: S: thread tiles of the consumer
// CHECK: %[[ANCHOR:.+]], %{{.+}} = transform.structured.fuse_into_containing_op
// CHECK: %[[FILL:.+]], %{{.+}} = transform.structured.fuse_into_containing_op
// CHECK: the unmapped parallel loops, one step at a time
// CHECK-NEXT: %{{.+}}, %{{.+}}, %[[INNER:.+]] = transform.structured.tile_using_for %{{.+}} tile_sizes [1, 1, 0, 0, 0]
// CHECK-NEXT: %[[LOOP:.+]] = transform.cast %[[INNER]] : !transform.op<"scf.for"> to !transform.any_op
// CHECK-NEXT: fuse_into_containing_op %[[ANCHOR]] into %[[LOOP]]
// CHECK: fuse_into_containing_op %[[FILL]] into
// CHECK: R: the remaining loops

// The accumulator is one thread's register tile of one batch element and
// channel.
// SCHED-NOT: memref.alloc() {{.*}} : memref<2x4x1x
// SCHED: scf.for {{.*}} to %c2 step %c1
// SCHED: scf.for {{.*}} to %c4 step %c1
// SCHED: memref.alloc() {{.*}} : memref<1x1x1x{{[0-9]+}}x{{[0-9]+}}xf32>
// SCHED: linalg.conv_3d_ncdhw_fcdhw

func.func @conv3d_tanh(%x: tensor<2x3x6x10x10xf32>, %w: tensor<4x3x3x3x3xf32>) -> tensor<2x4x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x4x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x4x8x8xf32>) -> tensor<2x4x4x8x8xf32>
  %c = linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : vector<3xi64>, strides = dense<1> : vector<3xi64>}
      ins(%x, %w : tensor<2x3x6x10x10xf32>, tensor<4x3x3x3x3xf32>) outs(%f : tensor<2x4x4x8x8xf32>) -> tensor<2x4x4x8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d, e) -> (a, b, c, d, e)>, affine_map<(a, b, c, d, e) -> (a, b, c, d, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<2x4x4x8x8xf32>) outs(%e : tensor<2x4x4x8x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %t = math.tanh %v : f32
      linalg.yield %t : f32
  } -> tensor<2x4x4x8x8xf32>
  return %r : tensor<2x4x4x8x8xf32>
}

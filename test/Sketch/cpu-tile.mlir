// The cpu.tile sketch for a small op of each kind, on A64FX (a fixed
// machine: 48 cores, 512-bit vectors) so the knob spaces are the same
// everywhere.
// RUN: ke-opt sketches %s --target cpu:a64fx | FileCheck %s
// RUN: ke-opt sketches %s --no-prepare-graph --target cpu:a64fx | FileCheck %s --check-prefix=NCHW

// Matmul: 64x96x96 is big enough to run on every core by default, one outer
// tile of rows per core (2 rows); register tiles of 2x32 (two 512-bit
// vectors of f32 wide, which divide the 96 columns; the 8 rows of the
// outer-product default capped at the outer tile, which a larger register
// tile would leave scalar), the inner k tile vectorized into outer products.
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch cpu.tile
// CHECK-NEXT: // knob threads: 1 2 4 8 16 32 [48]
// CHECK-NEXT: // knob forall.d0: 0 [2] 4 8 16 32
// CHECK-NEXT: // knob forall.d1: [0] 2 3 4 6 8 12 16 24 32 48
// CHECK-NEXT: // knob kblock.d2: [0] 32 64
// CHECK-NEXT: // knob reg.d0: 1 [2] 4 8 16 32 64
// CHECK-NEXT: // knob reg.d1: 1 2 3 4 6 8 12 16 24 [32] 48 64
// CHECK-NEXT: // knob kvec.d2: [1] 2 3 4 6 8 12 16
// CHECK-NEXT: // knob pad: [0] 1
// CHECK-NEXT: // knob unroll: [1] 2 4
// CHECK: transform.named_sequence @__transform_main
// CHECK: transform.structured.match ops{["linalg.matmul"]}
// CHECK: transform.structured.tile_using_forall %{{.*}} tile_sizes [2, 0, 0]
// CHECK: transform.structured.tile_using_for %{{.*}} tile_sizes [2, 32, 0]
// CHECK: transform.structured.tile_using_for %{{.*}} tile_sizes [0, 0, 1]
// CHECK-NOT: transform.loop.peel
// CHECK: transform.structured.vectorize_children_and_apply_patterns
// CHECK: transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
// Accumulator tiles stay in registers across the reduction loops.
// CHECK: %[[LOOPS:.*]] = transform.structured.match ops{["scf.for"]} in
// CHECK-NEXT: transform.loop.hoist_loop_invariant_subsets %[[LOOPS]] : !transform.any_op
func.func @matmul(%a: tensor<64x96xf32>, %b: tensor<96x96xf32>, %c: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x96xf32>, tensor<96x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}

// Channels-last 2-D convolution: the first output row and window row are
// tiled to 1 so the tile decomposes to a 1-D convolution the vectorizer
// handles; its register tile is an outer product like a matmul's (8 output
// columns by the 16 channels, input channels one at a time).
// CHECK-LABEL: // -----// workload {{.*}} linalg.conv_2d_nhwc_hwcf
// CHECK: // knob reg.d2:
// CHECK-NEXT: // knob reg.d3:
// CHECK-NEXT: // knob kvec.d6:
// CHECK: tile_using_for %{{.*}} tile_sizes [1, 1, 8, 16, 0, 0, 0]
// CHECK: tile_using_for %{{.*}} tile_sizes [0, 0, 0, 0, 1, 1, 1]
// CHECK: transform.structured.decompose
func.func @conv(%i: tensor<1x10x10x8xf32>, %f: tensor<3x3x8x16xf32>, %o: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%i, %f : tensor<1x10x10x8xf32>, tensor<3x3x8x16xf32>) outs(%o : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  return %r : tensor<1x8x8x16xf32>
}

// Channels-first convolutions keep 2-D tiles (no decompose); the graph
// preparation runs them channels-last, so only --no-prepare-graph shows it.
// NCHW-LABEL: // -----// workload {{.*}} linalg.conv_2d_nchw_fchw
// NCHW-NOT: transform.structured.decompose
// NCHW: transform.yield
func.func @conv_nchw(%i: tensor<1x4x11x11xf32>, %f: tensor<8x4x3x3xf32>, %o: tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%i, %f : tensor<1x4x11x11xf32>, tensor<8x4x3x3xf32>) outs(%o : tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
  return %r : tensor<1x8x5x5xf32>
}

// A row reduction vectorizes along k by default, carrying 16 x 16 partial
// sums along the row (test/Sketch/cpu-tile-partials.mlir).
// CHECK-LABEL: // -----// workload {{.*}} linalg.reduce
// CHECK: // knob kvec.d1: 1 2 3 4 6 8 12 [16]
// CHECK: tile_using_for %{{.*}} tile_sizes [16, 0]
// CHECK: tile_reduction_using_for %{{.*}} by tile_sizes = [0, 16]
// CHECK: lower_multi_reduction lowering_strategy = "innerreduction"
func.func @row_sum(%x: tensor<32x96xf32>, %o: tensor<32xf32>) -> tensor<32xf32> {
  %r = linalg.reduce ins(%x : tensor<32x96xf32>) outs(%o : tensor<32xf32>) dimensions = [1]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<32xf32>
}

// A 0-d op (the fill of a global sum's accumulator) has no loops to tile.
// CHECK-LABEL: // -----// workload {{.*}} linalg.fill
// CHECK: // sketch cpu.tile
// CHECK-NOT: tile_using
// CHECK: vectorize_children_and_apply_patterns
func.func @scalar_fill(%o: tensor<f32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %r = linalg.fill ins(%z : f32) outs(%o : tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

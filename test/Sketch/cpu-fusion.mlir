// Fusion in cpu.tile: the kernel of the matmul holds the fill of its
// accumulator (ke.producer) and its elementwise consumer (ke.consumer); the
// consumer is tiled across threads and the matmul and the fill are fused
// into its tiles. With no outer tiles, nothing is fused, but every op still
// gets vector-sized tiles.
// RUN: ke-opt sketches %s --target cpu:a64fx --print-kernels | FileCheck %s
// RUN: ke-opt sketches %s --target cpu:a64fx --knobs threads=1,forall.d0=0,forall.d1=0 | FileCheck %s --check-prefix=UNFUSED

// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// The consumer's destination is a buffer of its own (graph preparation's
// ke-normalize-empties gives it a tensor.empty of its own), after the
// matmul's accumulator and operands.
// CHECK: func.func @kernel(%{{.*}}: memref<96x128xf32>, %{{.*}}: memref<96x64xf32>, %{{.*}}: memref<64x128xf32>, %{{.*}}: memref<96x128xf32>)
// CHECK: linalg.fill {ke.producer}
// CHECK: linalg.matmul {ke.anchor}
// CHECK: linalg.generic
// CHECK-SAME: ke.consumer
// CHECK: bufferization.materialize_in_destination
// CHECK: %[[MM:.*]] = transform.structured.match ops{["linalg.matmul"]} attributes {ke.anchor}
// CHECK: %[[C:.*]] = transform.structured.match attributes {ke.consumer}
// CHECK: %[[P:.*]] = transform.structured.match attributes {ke.producer}
// CHECK: %{{.*}}, %[[F:.*]] = transform.structured.tile_using_forall %[[C]] tile_sizes [2, 0]
// CHECK: %{{.*}}, %[[F2:.*]] = transform.structured.fuse_into_containing_op %[[MM]] into %[[F]]
// CHECK: transform.structured.fuse_into_containing_op %[[P]] into %[[F2]]
// CHECK: tile_using_for %{{.*}} tile_sizes [2, 32, 0]
// CHECK: vector-sized tiles of a fused neighbour
// CHECK: vector-sized tiles of a fused neighbour
// CHECK: vectorize_children_and_apply_patterns

// UNFUSED-LABEL: // -----// workload {{.*}} linalg.matmul
// UNFUSED-NOT: fuse_into_containing_op
// UNFUSED: tile_using_for %{{.*}} tile_sizes [2, 32, 0]
// UNFUSED: tile_using_for %{{.*}} tile_sizes [1, 32]
// UNFUSED: tile_using_for %{{.*}} tile_sizes [1, 32]
func.func @matmul_relu(%a: tensor<96x64xf32>, %b: tensor<64x128xf32>) -> tensor<96x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x128xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<96x128xf32>) -> tensor<96x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<96x64xf32>, tensor<64x128xf32>) outs(%c : tensor<96x128xf32>) -> tensor<96x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<96x128xf32>) outs(%e : tensor<96x128xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.maximumf %x, %z : f32
      linalg.yield %y : f32
  } -> tensor<96x128xf32>
  return %r : tensor<96x128xf32>
}

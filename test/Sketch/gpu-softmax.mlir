// gpu.softmax, rows a multiple of the warp long: one row per block, the
// max and the sum reduced over the block's threads (partials in shared
// memory), the subtract-exp fused into the sum and into the normalization.
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.softmax | FileCheck %s
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.softmax --knobs threads=128,nvec=2 | FileCheck %s --check-prefix=KNOBS

// CHECK-LABEL: // -----// workload {{.*}} linalg.softmax
// CHECK-NEXT: // sketch gpu.softmax
// CHECK-NEXT: // knob threads: [32] 64 128 256
// CHECK-NEXT: // knob nvec: 1 2 [4] 8{{$}}
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 0] (mapping = [#gpu.block<x>])
// CHECK: transform.structured.decompose_interface
// CHECK: %[[MAX:.*]], %[[EXP:.*]], %[[SUM:.*]], %[[DIV:.*]] = transform.split_handle
// CHECK: %[[DIVS:.*]], %[[LOOP:.*]] = transform.structured.tile_using_for %[[DIV]] tile_sizes [0, 128]
// CHECK: %[[LOOPA:.*]] = transform.cast %[[LOOP]]
// CHECK: %{{.*}}, %[[DIVF:.*]] = transform.structured.tile_using_forall %[[DIVS]] tile_sizes [0, 4] (mapping = [#gpu.thread<x>])
// CHECK: %[[EXPL:.*]], %{{.*}} = transform.structured.fuse_into_containing_op %[[EXP]] into %[[LOOPA]]
// CHECK: fuse_into_containing_op %[[EXPL]] into %[[DIVF]]
// CHECK: %[[EXP2:.*]] = transform.get_producer_of_operand %[[SUM]][0]
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %[[SUMF:.*]] = transform.structured.tile_reduction_using_forall %[[SUM]] by num_threads = [0, 32] mapping = [#gpu.thread<x>]
// CHECK: fuse_into_containing_op %[[EXP2]] into %[[SUMF]]
// CHECK: bufferize_to_allocation {{.*}}memory_space = #gpu.address_space<workgroup>
// CHECK: tile_reduction_using_forall %[[MAX]] by num_threads = [0, 32]
// CHECK: transform.gpu.map_nested_forall_to_threads %{{.*}} block_dims = [32, 1, 1]

// KNOBS: tile_sizes [0, 2] (mapping = [#gpu.thread<x>])
// KNOBS: num_threads = [0, 128]
// KNOBS: block_dims = [128, 1, 1]
func.func @softmax(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %e = tensor.empty() : tensor<64x256xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}

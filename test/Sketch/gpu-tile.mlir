// gpu.tile for contractions and convolutions on sm_90: block tiles on
// #gpu.block, thread (register) tiles on #gpu.thread, and for matmuls whose
// tiles divide evenly the reduction staged through shared memory with
// cooperative copies by all threads.
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.tile | FileCheck %s

// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.tile
// CHECK-NEXT: // knob block.d0: 1 2 4 8 16 32 [64] 128
// CHECK-NEXT: // knob block.d1: 1 2 4 8 16 32 [64] 128
// CHECK-NEXT: // knob thread.d0: 1 2 [4] 8
// CHECK-NEXT: // knob thread.d1: 1 2 [4] 8
// CHECK-NEXT: // knob kvec.d2: 1 2 [4] 8 16
// CHECK-NEXT: // knob kblock.d2: 4 8 [16] 32 64
// CHECK-NEXT: // knob promote: 0 [1]
// CHECK: tile_using_forall %{{.*}} tile_sizes [64, 64, 0] (mapping = [#gpu.block<y>, #gpu.block<x>])
// CHECK: transform.structured.fuse_into_containing_op
// CHECK: tile_using_for %{{.*}} tile_sizes [0, 0, 16]
// CHECK: transform.structured.pad
// CHECK: bufferize_to_allocation {{.*}} {memory_space = #gpu.address_space<workgroup>, memcpy_op = "linalg.copy", bufferize_destination_only}
// CHECK: bufferize_to_allocation {{.*}} {memory_space = #gpu.address_space<workgroup>, memcpy_op = "linalg.copy", bufferize_destination_only}
// CHECK: transform.split_handle
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 4] (mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>])
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 4] (mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>])
// CHECK: tile_using_forall %{{.*}} tile_sizes [4, 4] (mapping = [#gpu.thread<y>, #gpu.thread<x>])
// CHECK: tile_using_forall %{{.*}} tile_sizes [4, 4, 0] (mapping = [#gpu.thread<y>, #gpu.thread<x>])
// CHECK: tile_using_for %{{.*}} tile_sizes [0, 0, 4]
// CHECK: vectorize_children_and_apply_patterns
// CHECK: transform.bufferization.one_shot_bufferize
// CHECK: transform.gpu.map_forall_to_blocks %{{.*}} generate_gpu_launch
// CHECK: transform.gpu.map_nested_forall_to_threads %{{.*}} block_dims = [16, 16, 1]
func.func @matmul(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>) outs(%c : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

// Irregular shapes: block tiles are divisors of the loops (partial tiles are
// not padded yet), register tiles divide the block tiles, kvec divides K.
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.tile
// CHECK-NEXT: // knob block.d0: 1 [37]
// CHECK-NEXT: // knob block.d1: [1] 53
// CHECK-NEXT: // knob thread.d0: [1] 2 4 8
// CHECK-NEXT: // knob thread.d1: [1] 2 4 8
// CHECK-NEXT: // knob kvec.d2: [1] 2 4 8 16
// CHECK: transform.yield
func.func @irregular(%a: tensor<37x29xf32>, %b: tensor<29x53xf32>, %c: tensor<37x53xf32>) -> tensor<37x53xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<37x29xf32>, tensor<29x53xf32>) outs(%c : tensor<37x53xf32>) -> tensor<37x53xf32>
  return %r : tensor<37x53xf32>
}

// A channels-last convolution: a GEMM-like schedule of output pixels x
// output channels. Threads map (oh, ow, oc) to z, y, x with register tiles
// of 4 columns x 8 channels; only loops split over several blocks get a
// grid dimension (here none but the channels'). Each thread steps through
// the window one filter row at a time, 4 input channels at a time, and the
// 2-D step is decomposed into a 1-D convolution, which vectorizes.
// CHECK-LABEL: // -----// workload {{.*}} linalg.conv_2d_nhwc_hwcf
// CHECK: // knob thread.d2: 1 2 [4] 8
// CHECK-NEXT: // knob thread.d3: 1 2 4 [8]
// CHECK: tile_using_forall %{{.*}} tile_sizes [0, 0, 0, 16, 0, 0, 0] (mapping = [#gpu.block<x>])
// CHECK: tile_using_forall %{{.*}} tile_sizes [0, 1, 4, 8, 0, 0, 0] (mapping = [#gpu.thread<z>, #gpu.thread<y>, #gpu.thread<x>])
// CHECK: tile_using_for %{{.*}} tile_sizes [0, 0, 0, 0, 1, 1, 4]
// CHECK: transform.structured.decompose
// CHECK: vectorize_children_and_apply_patterns
// CHECK: block_dims = [2, 2, 8]
func.func @conv(%i: tensor<1x10x10x8xf32>, %f: tensor<3x3x8x16xf32>, %o: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%i, %f : tensor<1x10x10x8xf32>, tensor<3x3x8x16xf32>) outs(%o : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  return %r : tensor<1x8x8x16xf32>
}

// A batch of images: the batch gets blocks of its own (block.d0) next to
// the output rows, so the grid covers n x oh / 2 blocks.
// CHECK-LABEL: // -----// workload {{.*}} linalg.conv_2d_nhwc_hwcf
// CHECK: // knob block.d0: [1] 2 4 8
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 2, 0, 0, 0, 0, 0] (mapping = [#gpu.block<y>, #gpu.block<x>])
// CHECK: tile_using_forall %{{.*}} tile_sizes [0, 1, 4, 8] (mapping = [#gpu.thread<z>, #gpu.thread<y>, #gpu.thread<x>])
// CHECK: transform.structured.decompose
// CHECK: block_dims = [8, 14, 2]
func.func @conv_batch(%i: tensor<8x58x58x64xf32>, %f: tensor<3x3x64x64xf32>) -> tensor<8x56x56x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x56x56x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<8x56x56x64xf32>) -> tensor<8x56x56x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%i, %f : tensor<8x58x58x64xf32>, tensor<3x3x64x64xf32>) outs(%c : tensor<8x56x56x64xf32>) -> tensor<8x56x56x64xf32>
  return %r : tensor<8x56x56x64xf32>
}

// Blocks are numbered linearly along grid x (#gpu.block<linear_dim_N>,
// grid_dims) when one grid dimension per loop does not fit: more than three
// loops split over blocks (a 3-D convolution's batch and depth besides its
// rows and columns), or more than 65535 blocks along grid y or z (a
// transpose with a prime extent of 65537, whose block tile can only be 1).
// gpu.elementwise gives the parallel loops left out of the thread mapping
// blocks of their own (block.dN, one iteration each by default): a 5-D fill
// splits its two outer loops over blocks instead of looping over them in
// every thread (its kernel was 72 blocks of 6144 stores a thread).
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.tile --knobs "block.d2=16,block.d3=2,block.d4=8,thread.d2=1,thread.d3=2,thread.d4=8,block.d0=1,block.d1=1,kvec.d8=3" | FileCheck %s --check-prefix=CONV
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.elementwise | FileCheck %s --check-prefix=TRANSPOSE
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.elementwise | FileCheck %s --check-prefix=FILL

// CONV-LABEL: linalg.conv_3d_ndhwc_dhwcf
// CONV: tile_using_forall %{{.*}} tile_sizes [1, 1, 16, 2, 0, 0, 0, 0, 0] (mapping = [#gpu.block<linear_dim_3>, #gpu.block<linear_dim_2>, #gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>])
// CONV: map_forall_to_blocks %{{.*}} generate_gpu_launch grid_dims = [32, 1, 1]
func.func @conv3d(%x: tensor<2x4x66x6x3xf32>, %w: tensor<3x3x3x3x8xf32>) -> tensor<2x2x64x4x8xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2x64x4x8xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x2x64x4x8xf32>) -> tensor<2x2x64x4x8xf32>
  %r = linalg.conv_3d_ndhwc_dhwcf {dilations = dense<1> : vector<3xi64>, strides = dense<1> : vector<3xi64>} ins(%x, %w : tensor<2x4x66x6x3xf32>, tensor<3x3x3x3x8xf32>) outs(%f : tensor<2x2x64x4x8xf32>) -> tensor<2x2x64x4x8xf32>
  return %r : tensor<2x2x64x4x8xf32>
}

// TRANSPOSE-LABEL: linalg.transpose
// TRANSPOSE: tile_using_forall %{{.*}} tile_sizes [2, 1, {{[0-9]+}}] (mapping = [#gpu.block<linear_dim_2>, #gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>])
// TRANSPOSE: map_forall_to_blocks %{{.*}} generate_gpu_launch grid_dims = [65537, 1, 1]
// PTX-COUNT-2: .visible .entry
// PTX-NOT: error
func.func @transpose(%x: tensor<2x4x65537xf32>) -> tensor<2x65537x4xf32> {
  %e = tensor.empty() : tensor<2x65537x4xf32>
  %t = linalg.transpose ins(%x : tensor<2x4x65537xf32>) outs(%e : tensor<2x65537x4xf32>) permutation = [0, 2, 1]
  return %t : tensor<2x65537x4xf32>
}

// FILL-LABEL: linalg.fill
// FILL: block.d0=1 block.d1=1
// FILL: tile_using_forall %{{.*}} tile_sizes [1, 1, 1, 18, 36] (mapping = [#gpu.block<linear_dim_4>, #gpu.block<linear_dim_3>, #gpu.block<linear_dim_2>, #gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>])
// FILL: map_forall_to_blocks %{{.*}} generate_gpu_launch grid_dims = [73728, 1, 1]
func.func @fill5d() -> tensor<16x64x36x36x36xbf16> {
  %c = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<16x64x36x36x36xbf16>
  %f = linalg.fill ins(%c : bf16) outs(%e : tensor<16x64x36x36x36xbf16>) -> tensor<16x64x36x36x36xbf16>
  return %f : tensor<16x64x36x36x36xbf16>
}

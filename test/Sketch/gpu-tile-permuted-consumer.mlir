// A channels-first tail after a convolution that the graph preparation ran
// channels-last reads the convolution's NHWC result through a permutation
// (n, c, h, w) -> (n, h, w, c). It is still the convolution's consumer, in
// its kernel group: the consumer's tiles are the anchor's, permuted
// (mapToConsumer), so each thread writes its 8 channels x 4 columns of
// the NCHW output from the registers that accumulated them.
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s --check-prefix=GROUP
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.tile | FileCheck %s
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>&1 | FileCheck %s --check-prefix=PTX

// GROUP: workload [[CONV:[0-9a-f]+]] linalg.conv_2d_nhwc_hwcf
// GROUP: workload {{[0-9a-f]+}} linalg.generic
// GROUP-NEXT: fused into workload [[CONV]]

// CHECK: sketch gpu.tile: block.d1=12 block.d2=12 block.d3=16 thread.d1=1 thread.d2=4 thread.d3=8
// CHECK: S: block tiles of the consumer, the anchor fused into them
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 0, 0, 0] (mapping = [#gpu.block<x>])
// CHECK: S: thread tiles of the consumer
// CHECK: tile_using_forall %{{.*}} tile_sizes [0, 8, 1, 4] (mapping = [#gpu.thread<x>, #gpu.thread<z>, #gpu.thread<y>])

// Three kernels: the transposes of the input and the filter, and the
// convolution with its tail (no kernel of its own for the ReLU).
// PTX-COUNT-3: .visible .entry
// PTX-NOT: .visible .entry
// PTX-NOT: .local
func.func @conv_relu(%x: tensor<2x4x14x14xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<2x16x12x12xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x12x12xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x16x12x12xf32>) -> tensor<2x16x12x12xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<2x4x14x14xf32>, tensor<16x4x3x3xf32>) outs(%f : tensor<2x16x12x12xf32>) -> tensor<2x16x12x12xf32>
  %e2 = tensor.empty() : tensor<2x16x12x12xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r : tensor<2x16x12x12xf32>) outs(%e2 : tensor<2x16x12x12xf32>) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.maximumf %in, %c : f32
    linalg.yield %z : f32
  } -> tensor<2x16x12x12xf32>
  return %y : tensor<2x16x12x12xf32>
}

// A norm over the last dimension of a 5-D tensor (a LayerNorm after a 3-D
// convolution) has four row dimensions, one more than the grid: its rows
// are numbered linearly along grid x. Before, no GPU rule took it.
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=scheduled -o - 2>&1 | FileCheck %s --check-prefix=LAUNCH

// CHECK: // sketch gpu.rownorm
// CHECK: tile_using_forall {{.*}} tile_sizes [1, 1, 1, 1, 0] (mapping = [#gpu.block<linear_dim_3>, #gpu.block<linear_dim_2>, #gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>])

// 2 * 3 * 4 * 5 = 120 blocks along x, each row's four indices taken from
// the block id (without grid_dims the launch had 5 x 4 x 3 blocks and the
// first index was always 0).
// CHECK: map_forall_to_blocks {{.*}} generate_gpu_launch grid_dims = [120, 1, 1]
// LAUNCH: gpu.launch blocks({{.*}}) in ({{.*}} = %c120, {{.*}} = %c1, {{.*}} = %c1) threads
// LAUNCH: affine_map<()[s0] -> (s0 mod 5)>
// LAUNCH: affine_map<()[s0] -> ((s0 mod 20) floordiv 5)>
// LAUNCH: affine_map<()[s0] -> ((s0 mod 60) floordiv 20)>
// LAUNCH: s0 floordiv 60

func.func @layernorm_rank5(%x: tensor<2x3x4x5x256xf32>, %g: tensor<256xf32>, %b: tensor<256xf32>) -> tensor<2x3x4x5x256xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.00390625 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<2x3x4x5x256xf32>
  %er = tensor.empty() : tensor<2x3x4x5xf32>
  %smi = linalg.fill ins(%zero : f32) outs(%er : tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(a, c, d, e, b) -> (a, c, d, e, b)>, affine_map<(a, c, d, e, b) -> (a, c, d, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x3x4x5x256xf32>) outs(%smi : tensor<2x3x4x5xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
  } -> tensor<2x3x4x5xf32>
  %svi = linalg.fill ins(%zero : f32) outs(%er : tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  %sv = linalg.generic {indexing_maps = [affine_map<(a, c, d, e, b) -> (a, c, d, e, b)>, affine_map<(a, c, d, e, b) -> (a, c, d, e)>, affine_map<(a, c, d, e, b) -> (a, c, d, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %sm : tensor<2x3x4x5x256xf32>, tensor<2x3x4x5xf32>) outs(%svi : tensor<2x3x4x5xf32>) {
    ^bb0(%v: f32, %p: f32, %acc: f32):
      %mu = arith.mulf %p, %inv : f32
      %d = arith.subf %v, %mu : f32
      %q = arith.mulf %d, %d : f32
      %s = arith.addf %q, %acc : f32
      linalg.yield %s : f32
  } -> tensor<2x3x4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, c, d, e, b) -> (a, c, d, e, b)>, affine_map<(a, c, d, e, b) -> (a, c, d, e)>, affine_map<(a, c, d, e, b) -> (a, c, d, e)>, affine_map<(a, c, d, e, b) -> (b)>, affine_map<(a, c, d, e, b) -> (b)>, affine_map<(a, c, d, e, b) -> (a, c, d, e, b)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %sm, %sv, %g, %b : tensor<2x3x4x5x256xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<256xf32>, tensor<256xf32>) outs(%e : tensor<2x3x4x5x256xf32>) {
    ^bb0(%v: f32, %r0: f32, %r1: f32, %c0: f32, %c1: f32, %o: f32):
      %mu = arith.mulf %r0, %inv : f32
      %var = arith.mulf %r1, %inv : f32
      %ve = arith.addf %var, %eps : f32
      %rs = math.rsqrt %ve : f32
      %d = arith.subf %v, %mu : f32
      %n = arith.mulf %d, %rs : f32
      %y = arith.mulf %n, %c0 : f32
      %z = arith.addf %y, %c1 : f32
      linalg.yield %z : f32
  } -> tensor<2x3x4x5x256xf32>
  return %r : tensor<2x3x4x5x256xf32>
}

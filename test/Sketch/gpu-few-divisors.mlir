// Block tiles divide their loops. Where the innermost loop has few divisors
// (262149 = 3 x 87383: block tiles of 1 or 3 up to 1024), the threads it
// cannot take go to the outer loops: 8 x 32 x 3 threads per block, not the
// 1 x 1 x 3 of a budget spent on threads the divisor left out (a strided
// ConvTranspose1d's zero-stuffing gather in KernelBench).
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s

// CHECK: sketch gpu.elementwise: block.d0=8 block.d1=32 block.d2=3 thread.d0=1 thread.d1=1 thread.d2=3
// CHECK: map_nested_forall_to_threads %{{.*}} block_dims = [1, 32, 8]
func.func @stuffed(%x: tensor<16x32x262149xf32>) -> tensor<16x32x262149xf32> {
  %e = tensor.empty() : tensor<16x32x262149xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<16x32x262149xf32>) outs(%e : tensor<16x32x262149xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<16x32x262149xf32>
  return %y : tensor<16x32x262149xf32>
}

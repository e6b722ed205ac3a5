// gpu.reduce on reductions whose body computes before it combines
// (`acc + x*x`, `acc + (x - mean)^2`): each thread runs the whole body over
// its chunk, the partial results are combined by the combining op alone.
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s

// The sum of squares of rmsnorm.
// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch gpu.reduce
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 0] (mapping = [#gpu.block<x>])
// CHECK: tile_reduction_using_forall %{{.*}} by num_threads = [0, 128] mapping = [#gpu.thread<x>]
// CHECK: bufferize_to_allocation %{{.*}} {memory_space = #gpu.address_space<workgroup>, bufferize_destination_only}
// CHECK: transform.gpu.map_nested_forall_to_threads %{{.*}} block_dims = [128, 1, 1]
func.func @sum_squares(%x: tensor<64x1024xf32>, %o: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1024xf32>) outs(%o : tensor<64xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %q = arith.mulf %v, %v : f32
      %s = arith.addf %q, %acc : f32
      linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// The variance of layernorm: a second input (the row's sum) broadcast
// along the row.
// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch gpu.reduce
// CHECK: tile_reduction_using_forall %{{.*}} by num_threads = [0, 128] mapping = [#gpu.thread<x>]
func.func @variance(%x: tensor<64x1024xf32>, %m: tensor<64xf32>, %o: tensor<64xf32>) -> tensor<64xf32> {
  %inv = arith.constant 0.0009765625 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<64x1024xf32>, tensor<64xf32>) outs(%o : tensor<64xf32>) {
    ^bb0(%v: f32, %p: f32, %acc: f32):
      %mu = arith.mulf %p, %inv : f32
      %d = arith.subf %v, %mu : f32
      %q = arith.mulf %d, %d : f32
      %s = arith.addf %q, %acc : f32
      linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// The accumulator is used after the combine: the threads' partials cannot
// be combined by the addition alone, the row stays with one thread.
// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch gpu.elementwise
func.func @scaled_accumulator(%x: tensor<64x1024xf32>, %o: tensor<64xf32>) -> tensor<64xf32> {
  %two = arith.constant 2.0 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1024xf32>) outs(%o : tensor<64xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %v, %acc : f32
      %t = arith.mulf %s, %two : f32
      linalg.yield %t : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// The accumulator feeds the computation as well as the combine.
// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch gpu.elementwise
func.func @accumulator_twice(%x: tensor<64x1024xf32>, %o: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1024xf32>) outs(%o : tensor<64xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %q = arith.mulf %v, %acc : f32
      %s = arith.addf %q, %acc : f32
      linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

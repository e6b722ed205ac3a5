// A layer norm on a GPU target is one kernel: the normalization (the
// anchor) holds the mean's and the variance's row reductions and their
// fills (ke.row_reduction), fused into its one-row-per-block loop latest
// first, each split over the block's threads, then the normalization split
// over the same threads. On the CPU the three are one group too, which
// cpu.rows schedules (test/Sketch/cpu-rows.mlir), with no row_reduction
// marks (those are gpu.rownorm's).
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s
// RUN: ke-opt sketches %s --target cpu | FileCheck %s --check-prefix=CPU
// RUN: ke-opt sketches %s --target cuda:sm_90 --knobs threads=64,kvec=8 | FileCheck %s --check-prefix=KNOBS
// RUN: ke-opt sketches %s --target cuda:sm_90 --knobs threads=128,kvec=4 | FileCheck %s --check-prefix=LIMITS

// CHECK: // -----// workload {{[0-9a-f]+}} linalg.fill
// CHECK-NEXT: // fused into workload [[NORM:[0-9a-f]+]]
// CHECK: // -----// workload {{[0-9a-f]+}} linalg.generic
// CHECK-NEXT: // fused into workload [[NORM]]
// CHECK: // -----// workload {{[0-9a-f]+}} linalg.generic
// CHECK-NEXT: // fused into workload [[NORM]]
// CHECK: // -----// workload [[NORM]] linalg.generic
// CHECK-NEXT: // sketch gpu.rownorm
// CHECK-NEXT: // knob threads: [32] 64 128 256
// CHECK-NEXT: // knob kvec: 1 2 [4] 8 16
// CHECK: %[[ALL:.+]] = transform.structured.match attributes {ke.row_reduction}
// CHECK: %[[MEAN:.+]], %[[VAR:.+]] = transform.split_handle %[[ALL]]
// CHECK: %[[MEANFILL:.+]] = transform.get_producer_of_operand %[[MEAN]][1]
// CHECK: %[[VARFILL:.+]] = transform.get_producer_of_operand %[[VAR]][2]
// CHECK: tile_using_forall {{.*}} tile_sizes [1, 0] (mapping = [#gpu.block<x>])
// CHECK: transform.apply_cse
// CHECK: fuse_into_containing_op %[[VAR]]
// CHECK: fuse_into_containing_op %[[VARFILL]]
// CHECK: transform.apply_cse
// CHECK: fuse_into_containing_op %[[MEAN]]
// CHECK: fuse_into_containing_op %[[MEANFILL]]
// CHECK-NOT: apply_cse
// CHECK: tile_reduction_using_forall {{.*}} by num_threads = [0, 32] mapping = [#gpu.thread<x>]
// CHECK: bufferize_to_allocation {{.*}}workgroup
// CHECK: bufferize_to_allocation {{.*}}workgroup
// CHECK: tile_using_for {{.*}} tile_sizes [0, 4]
// CHECK: tile_reduction_using_forall {{.*}} by num_threads = [0, 32] mapping = [#gpu.thread<x>]
// CHECK: S: the elementwise op
// CHECK-NEXT: tile_using_for {{.*}} tile_sizes [0, 128]
// CHECK-NEXT: transform.cast
// CHECK-NEXT: tile_using_forall {{.*}} tile_sizes [0, 4] (mapping = [#gpu.thread<x>])
// CHECK: map_nested_forall_to_threads {{.*}} block_dims = [32, 1, 1]

// CPU: // -----// workload {{[0-9a-f]+}} linalg.generic
// CPU-NEXT: // fused into workload [[CPUNORM:[0-9a-f]+]]
// CPU: // -----// workload {{[0-9a-f]+}} linalg.generic
// CPU-NEXT: // fused into workload [[CPUNORM]]
// CPU: // -----// workload [[CPUNORM]] linalg.generic
// CPU-NEXT: // sketch cpu.rows
// CPU-NOT: ke.row_reduction

// KNOBS: sketch gpu.rownorm: threads=64 kvec=8
// KNOBS: num_threads = [0, 64]
// KNOBS: tile_using_for {{.*}} tile_sizes [0, 8]
// KNOBS: tile_using_for {{.*}} tile_sizes [0, 512]
// KNOBS: block_dims = [64, 1, 1]

// LIMITS: // sketch gpu.rownorm
// LIMITS: // outside the target's limits: kvec must divide each thread's chunk of the row

func.func @layernorm(%x: tensor<16x256xf32>, %g: tensor<256xf32>, %b: tensor<256xf32>) -> tensor<16x256xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.00390625 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<16x256xf32>
  %er = tensor.empty() : tensor<16xf32>
  %smi = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x256xf32>) outs(%smi : tensor<16xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
  } -> tensor<16xf32>
  %svi = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %sv = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %sm : tensor<16x256xf32>, tensor<16xf32>) outs(%svi : tensor<16xf32>) {
    ^bb0(%v: f32, %p: f32, %acc: f32):
      %mu = arith.mulf %p, %inv : f32
      %d = arith.subf %v, %mu : f32
      %q = arith.mulf %d, %d : f32
      %s = arith.addf %q, %acc : f32
      linalg.yield %s : f32
  } -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (b)>, affine_map<(a, b) -> (b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sm, %sv, %g, %b : tensor<16x256xf32>, tensor<16xf32>, tensor<16xf32>, tensor<256xf32>, tensor<256xf32>) outs(%e : tensor<16x256xf32>) {
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
  } -> tensor<16x256xf32>
  return %r : tensor<16x256xf32>
}

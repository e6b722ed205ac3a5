// gpu.reduce: rows to blocks, the reduction split over a multiple of the
// warp size threads (partial results in shared memory), one thread per row
// combines them.
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.reduce | FileCheck %s

// CHECK-LABEL: // -----// workload {{.*}} linalg.reduce
// CHECK-NEXT: // sketch gpu.reduce
// CHECK-NEXT: // knob block.d0: [1] 2 4 8
// CHECK-NEXT: // knob threads: 32 [64] 128 256 512
// CHECK-NEXT: // knob kvec.d1: 1 2 [4] 8 16
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 0] (mapping = [#gpu.block<x>])
// CHECK: tile_reduction_using_forall %{{.*}} by num_threads = [0, 64] mapping = [#gpu.thread<x>]
// CHECK: tile_using_forall %{{.*}} tile_sizes [0, 1] (mapping = [#gpu.thread<x>])
// CHECK: bufferize_to_allocation %{{.*}} {memory_space = #gpu.address_space<workgroup>, bufferize_destination_only}
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 0] (mapping = [#gpu.thread<x>])
// CHECK: tile_using_for %{{.*}} tile_sizes [1, 4]
// CHECK: transform.gpu.map_nested_forall_to_threads %{{.*}} block_dims = [64, 1, 1]
func.func @row_sum(%x: tensor<64x512xf32>, %o: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.reduce ins(%x : tensor<64x512xf32>) outs(%o : tensor<64xf32>) dimensions = [1]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<64xf32>
}

// Short rows (fewer than two warps of elements) are left to gpu.elementwise.
// CHECK-LABEL: // -----// workload {{.*}} linalg.reduce
// CHECK-NEXT: // no sketch rule applies
func.func @short_rows(%x: tensor<64x48xf32>, %o: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.reduce ins(%x : tensor<64x48xf32>) outs(%o : tensor<64xf32>) dimensions = [1]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<64xf32>
}

// A reduction to one value, large enough for many blocks: split_reduction
// into per-block partial results (launch 1, rows to blocks); the GPU
// lowering makes the combine of the partials launch 2.
// CHECK-LABEL: // -----// workload {{.*}} linalg.reduce
// CHECK-NEXT: // sketch gpu.reduce
// CHECK-NEXT: // knob blocks: 64 128 256 512 [1024] 2048
// CHECK-NEXT: // knob threads: 32 [64] 128 256 512 1024
// CHECK-NEXT: // knob kvec.d0: 1 2 [4] 8 16
// CHECK: split_reduction %{{.*}} {split_factor = 1024, insert_split_dimension = 0}
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 0] (mapping = [#gpu.block<x>])
// CHECK: tile_reduction_using_forall %{{.*}} by num_threads = [0, 64] mapping = [#gpu.thread<x>]
// CHECK: transform.gpu.map_nested_forall_to_threads %{{.*}} block_dims = [64, 1, 1]
func.func @global_sum(%x: tensor<1048576xf32>, %o: tensor<f32>) -> tensor<f32> {
  %r = linalg.reduce ins(%x : tensor<1048576xf32>) outs(%o : tensor<f32>) dimensions = [0]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// Too short for blocks of 16 warps of elements (4096 elements, the small
// suite's global sum): 2 to 32 blocks whose chunks are whole warps of
// vectors, rather than one thread summing everything.
// CHECK-LABEL: // -----// workload {{.*}} linalg.reduce
// CHECK-NEXT: // sketch gpu.reduce
// CHECK-NEXT: // knob blocks: 2 4 8 16 [32]
// CHECK-NEXT: // knob threads: [32] 64 128
// CHECK: split_reduction %{{.*}} {split_factor = 32, insert_split_dimension = 0}
func.func @short_global_sum(%x: tensor<4096xf32>, %o: tensor<f32>) -> tensor<f32> {
  %r = linalg.reduce ins(%x : tensor<4096xf32>) outs(%o : tensor<f32>) dimensions = [0]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// Shorter still, or with chunks that are not whole warps of vectors: no
// gpu.reduce (gpu.elementwise sums it in one thread).
// CHECK-LABEL: // -----// workload {{.*}} linalg.reduce
// CHECK-NEXT: // no sketch rule applies
func.func @tiny_global_sum(%x: tensor<640xf32>, %o: tensor<f32>) -> tensor<f32> {
  %r = linalg.reduce ins(%x : tensor<640xf32>) outs(%o : tensor<f32>) dimensions = [0]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

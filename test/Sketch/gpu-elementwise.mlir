// gpu.elementwise: vector-wide thread tiles (128-bit accesses: 4 f32, 8
// bf16), eight warps per block, enough blocks to cover the op.
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.elementwise | FileCheck %s

// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch gpu.elementwise
// CHECK-NEXT: // knob block.d0: [1] 2 4 8 16 32 64 128 256
// CHECK-NEXT: // knob block.d1: 1 2 4 8 16 32 64 128 256 512 [1024]
// CHECK-NEXT: // knob thread.d0: [1] 2 4
// CHECK-NEXT: // knob thread.d1: 1 2 [4] 8
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 1024] (mapping = [#gpu.block<y>, #gpu.block<x>])
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 4] (mapping = [#gpu.thread<y>, #gpu.thread<x>])
// CHECK: transform.gpu.map_nested_forall_to_threads %{{.*}} block_dims = [256, 1, 1]
#id = affine_map<(a, b) -> (a, b)>
func.func @relu(%x: tensor<256x1024xf32>, %o: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %z = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<256x1024xf32>) outs(%o : tensor<256x1024xf32>) {
    ^bb0(%v: f32, %out: f32):
      %m = arith.maximumf %v, %z : f32
      linalg.yield %m : f32
  } -> tensor<256x1024xf32>
  return %r : tensor<256x1024xf32>
}

// bf16: eight elements per thread, two rows per block.
// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK: tile_using_forall %{{.*}} tile_sizes [2, 1024] (mapping = [#gpu.block<y>, #gpu.block<x>])
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 8] (mapping = [#gpu.thread<y>, #gpu.thread<x>])
// CHECK: block_dims = [128, 2, 1]
func.func @relu_bf16(%x: tensor<64x1024xbf16>, %o: tensor<64x1024xbf16>) -> tensor<64x1024xbf16> {
  %z = arith.constant 0.0 : bf16
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x1024xbf16>) outs(%o : tensor<64x1024xbf16>) {
    ^bb0(%v: bf16, %out: bf16):
      %m = arith.maximumf %v, %z : bf16
      linalg.yield %m : bf16
  } -> tensor<64x1024xbf16>
  return %r : tensor<64x1024xbf16>
}

// 65536 rows: one row per block would need 65536 blocks along y, one more
// than the grid allows (KernelBench's matrix-scalar multiply). The default
// takes two rows per block; before, the limit check shrank every tile to
// one and the launch failed.
// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK: // knob block.d0: 1 [2] 4
// CHECK: tile_using_forall %{{.*}} tile_sizes [2, 1024] (mapping = [#gpu.block<y>, #gpu.block<x>])
// CHECK: block_dims = [256, 2, 1]
func.func @many_rows(%x: tensor<65536x1024xf32>, %o: tensor<65536x1024xf32>) -> tensor<65536x1024xf32> {
  %z = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<65536x1024xf32>) outs(%o : tensor<65536x1024xf32>) {
    ^bb0(%v: f32, %out: f32):
      %m = arith.maximumf %v, %z : f32
      linalg.yield %m : f32
  } -> tensor<65536x1024xf32>
  return %r : tensor<65536x1024xf32>
}

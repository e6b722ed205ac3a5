// gpu.mma for 16-bit matmuls on sm_80 and later: block tiles on
// #gpu.block, A and B stages copied to shared memory 16 bytes per thread,
// warp tiles on #gpu.warp, each warp's tile one contraction unrolled to
// mma.sync's m16n8k16.
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s
// RUN: ke-opt sketches %s --target cuda:sm_75 | FileCheck %s --check-prefix=OLD
// RUN: ke-opt sketches %s --target rocm:gfx942 | FileCheck %s --check-prefix=ROCM

// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.mma
// CHECK-NEXT: // knob block.m: 32 64 [128] 256
// CHECK-NEXT: // knob block.n: 32 64 [128]{{$}}
// CHECK-NEXT: // knob kblock: 16 [32] 64
// CHECK-NEXT: // knob warps.m: 1 [2] 4
// CHECK-NEXT: // knob warps.n: 1 [2] 4
// CHECK: tile_using_forall %{{.*}} tile_sizes [128, 128, 0] (mapping = [#gpu.block<y>, #gpu.block<x>])
// CHECK: tile_using_for %{{.*}} tile_sizes [0, 0, 32]
// CHECK: transform.structured.pad {{.*}}padding_values = [0.0 : bf16, 0.0 : bf16, 0.0 : f32]
// CHECK-COUNT-2: bufferize_to_allocation {{.*}}memory_space = #gpu.address_space<workgroup>, memcpy_op = "linalg.copy"
// 128x32 and 32x128 bf16 tiles over 128 threads: 4 rows of 8 elements each.
// CHECK-COUNT-2: tile_sizes [4, 8] (mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>])
// CHECK: tile_sizes [64, 64] (mapping = [#gpu.warp<linear_dim_1>, #gpu.warp<linear_dim_0>])
// CHECK: tile_sizes [64, 64, 0] (mapping = [#gpu.warp<linear_dim_1>, #gpu.warp<linear_dim_0>])
// CHECK: vectorize_children_and_apply_patterns
// CHECK: map_nested_forall_to_threads %{{.*}} block_dims = [128, 1, 1] warp_size = 32
// CHECK: transform.apply_patterns.vector.fold_arith_extension
// CHECK-NEXT: transform.apply_patterns.gpu.unroll_vectors_subgroup_mma [16, 8, 16]
// CHECK-NEXT: transform.apply_patterns.memref.fold_memref_alias_ops
// OLD-LABEL: // -----// workload {{.*}} linalg.matmul
// OLD-NEXT: // sketch gpu.tile
// ROCm has no mma.sync: gpu.mfma (test/Sketch/gpu-mfma.mlir), then gpu.tile.
// ROCM-LABEL: // -----// workload {{.*}} linalg.matmul
// ROCM-NEXT: // sketch gpu.mfma
// ROCM-NOT: gpu.mma
// ROCM: // sketch gpu.tile
func.func @bf16(%a: tensor<256x64xbf16>, %b: tensor<64x128xbf16>) -> tensor<256x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x128xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x128xf32>) -> tensor<256x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x64xbf16>, tensor<64x128xbf16>) outs(%c : tensor<256x128xf32>) -> tensor<256x128xf32>
  return %r : tensor<256x128xf32>
}

// f16 -> f16 too.
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.mma
// CHECK: padding_values = [0.0 : f16, 0.0 : f16, 0.0 : f16]
func.func @f16(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>, %c: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf16>, tensor<64x64xf16>) outs(%c : tensor<64x64xf16>) -> tensor<64x64xf16>
  return %r : tensor<64x64xf16>
}

// B stored N x K (nn.Linear's weight): its shared tile is N x K too.
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.mma
// CHECK: tile_sizes [4, 8] (mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>])
// CHECK: tile_sizes [4, 8] (mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>])
func.func @transposed_b(%a: tensor<128x64xbf16>, %b: tensor<128x64xbf16>, %c: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : tensor<128x64xbf16>, tensor<128x64xbf16>) outs(%c : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

// A batch matmul: one batch per block on #gpu.block<z>, the batch loop
// untiled inside, the contraction's unit batch loop dropped before the
// unrolling.
// CHECK-LABEL: // -----// workload {{.*}} linalg.batch_matmul
// CHECK-NEXT: // sketch gpu.mma
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 128, 128, 0] (mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>])
// CHECK: tile_using_for %{{.*}} tile_sizes [0, 0, 0, 32]
// CHECK: padding_dimensions = [0, 1, 2, 3]
// CHECK-COUNT-2: tile_sizes [0, 4, 8] (mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>])
// CHECK: tile_sizes [0, 64, 64] (mapping = [#gpu.warp<linear_dim_1>, #gpu.warp<linear_dim_0>])
// CHECK: tile_sizes [0, 64, 64, 0] (mapping = [#gpu.warp<linear_dim_1>, #gpu.warp<linear_dim_0>])
// CHECK: transform.apply_patterns.vector.cast_away_vector_leading_one_dim
func.func @batched(%a: tensor<4x128x64xbf16>, %b: tensor<4x64x128xbf16>, %c: tensor<4x128x128xf32>) -> tensor<4x128x128xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x128x64xbf16>, tensor<4x64x128xbf16>) outs(%c : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  return %r : tensor<4x128x128xf32>
}

// Not for gpu.mma (yet): f32 operands and shapes that are not whole
// instructions (K = 24).
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.ffma
func.func @f32(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.tile
func.func @odd_k(%a: tensor<64x24xf16>, %b: tensor<24x64xf16>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x24xf16>, tensor<24x64xf16>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// A consumer that reads the result transposed is a kernel of its own (the
// epilogue's lanes compute the elements they hold): the matmul alone is
// gpu.mma.
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.mma
// CHECK: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch gpu.elementwise
func.func @transposed_consumer(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x64xbf16>, tensor<64x64xbf16>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
       ins(%r : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<64x64xf32>
  return %g : tensor<64x64xf32>
}

// A fused elementwise consumer (bias, GELU, the cast to bf16) is the
// epilogue: its block tiles carry the matmul's, the f32 block tile between
// them is private (ke-gpu-vector-to-mma forwards it from the accumulator
// registers), and its warp tiles are the accumulators'.
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.mma
// CHECK: %[[MM:.*]] = transform.structured.match ops{["linalg.matmul"]} attributes {ke.anchor}
// CHECK: %[[CONSUMER:.*]] = transform.structured.match attributes {ke.consumer}
// CHECK: %[[FILL:.*]] = transform.structured.match attributes {ke.producer}
// CHECK: %[[TILED:.*]], %[[BLOCKS:.*]] = transform.structured.tile_using_forall %[[CONSUMER]] tile_sizes [128, 128] (mapping = [#gpu.block<y>, #gpu.block<x>])
// CHECK: %[[FUSED:.*]], %[[BLOCKS2:.*]] = transform.structured.fuse_into_containing_op %[[MM]] into %[[BLOCKS]]
// CHECK: %[[FUSEDFILL:.*]], %{{.*}} = transform.structured.fuse_into_containing_op %[[FILL]] into %[[BLOCKS2]]
// CHECK: bufferize_to_allocation %[[FUSEDFILL]] {memory_space = #gpu.address_space<private>, bufferize_destination_only}
// CHECK: tile_using_for %[[FUSED]] tile_sizes [0, 0, 32]
// CHECK: tile_using_forall %[[FUSEDFILL]] tile_sizes [64, 64] (mapping = [#gpu.warp<linear_dim_1>, #gpu.warp<linear_dim_0>])
// CHECK: tile_using_forall %{{.*}} tile_sizes [64, 64, 0] (mapping = [#gpu.warp<linear_dim_1>, #gpu.warp<linear_dim_0>])
// CHECK: tile_using_forall %[[TILED]] tile_sizes [64, 64] (mapping = [#gpu.warp<linear_dim_1>, #gpu.warp<linear_dim_0>])
func.func @epilogue(%x: tensor<256x128xbf16>, %w: tensor<512x128xbf16>, %bias: tensor<512xbf16>) -> tensor<256x512xbf16> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x512xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : tensor<256x128xbf16>, tensor<512x128xbf16>) outs(%c : tensor<256x512xf32>) -> tensor<256x512xf32>
  %o = tensor.empty() : tensor<256x512xbf16>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%r, %bias : tensor<256x512xf32>, tensor<512xbf16>) outs(%o : tensor<256x512xbf16>) {
  ^bb0(%a: f32, %b: bf16, %out: bf16):
    %bf = arith.extf %b : bf16 to f32
    %s = arith.addf %a, %bf : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x512xbf16>
  return %g : tensor<256x512xbf16>
}

// RUN: ke-opt %s --split-input-file --verify-diagnostics --ke-gpu-wgmma-matmuls | FileCheck %s

// A bf16 matmul marked by gpu.wgmma (128x256 blocks, 4 stages; B K x N)
// becomes one kernel: 8 x 2 blocks of two warpgroups, 4 x (128 + 256) x 64
// bf16 tiles in dynamic shared memory plus 1 KiB to align them, tiles 0 and
// 1 copied before the loop (A: 4 cp.async per thread, B: 8), then per K
// tile: wait (one group in flight), proxy fence, barrier, four
// m64n256k16 wgmma on K-major A and MN-major B (trans-b: the "row" layout;
// descriptor fields: stride 1024 bytes, leading 16 for A and 8192 for B's
// 64-column slabs, the 128-byte swizzle), the copies two tiles ahead, and
// a wait with one wgmma group in flight. The fill is gone: its value is
// added to each accumulator as it is stored.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.matmul
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[SMEM:.*]] = arith.constant 197632 : i32
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C2]], {{.*}} = %[[C8]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[C256]], {{.*}}) dynamic_shared_memory_size %[[SMEM]]
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<4x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<4x4x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-24: nvgpu.device_async_copy {{.*}}, 8 {bypassL1}
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: %[[AFIELDS:.*]] = arith.constant 4611686293305360384 : i64
// CHECK: arith.ori {{.*}}, %[[AFIELDS]]
// CHECK: %[[BFIELDS:.*]] = arith.constant 4611686293338849280 : i64
// CHECK: arith.ori {{.*}}, %[[BFIELDS]]
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: scf.if
// CHECK-COUNT-12: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64: vector.store {{.*}} : memref<1024x512xf32>, vector<2xf32>
func.func @matmul(%c: memref<1024x512xf32>, %a: memref<1024x256xbf16>, %b: memref<256x512xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<1024x512xf32>)
  linalg.matmul {ke.wgmma = {block_m = 128 : i64, block_n = 256 : i64, stages = 4 : i64}}
    ins(%a, %b : memref<1024x256xbf16>, memref<256x512xbf16>) outs(%c : memref<1024x512xf32>)
  return
}

// -----

// Grouped rasterization (group_m = 4 of 8 tile rows): the launch's linear
// block id walks 4 tile rows per tile column; the last group may be
// shorter (min).
// CHECK-LABEL: func.func @grouped
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9]*]], %[[BY:[a-z0-9]*]], %{{[a-z0-9]*}}) in
// CHECK: %[[ROWS:.*]] = arith.muli %[[BY]], %{{.*}} : index
// CHECK: %[[ID:.*]] = arith.addi %[[ROWS]], %[[BX]] : index
// CHECK: arith.divui %[[ID]]
// CHECK: arith.remui %[[ID]]
// CHECK: arith.minui
func.func @grouped(%c: memref<1024x512xf32>, %a: memref<1024x128xbf16>, %b: memref<128x512xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<1024x512xf32>)
  linalg.matmul {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64, group_m = 4 : i64}}
    ins(%a, %b : memref<1024x128xbf16>, memref<128x512xbf16>) outs(%c : memref<1024x512xf32>)
  return
}

// -----

// Partial tiles (200 x 136 x 72 with 128 x 128 blocks, K tiles of 64): a 2
// x 2 grid; chunks past M, N or K read nothing from index 0 and zero-fill
// (cp.async's source size 0), and the stores of pairs past M or N are
// skipped.
// CHECK-LABEL: func.func @partial
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{(_[0-9]+)?}}, {{.*}} = %c2{{(_[0-9]+)?}}, {{.*}})
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK: %[[N:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1}
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.if
// CHECK: vector.store
func.func @partial(%c: memref<200x136xf32>, %a: memref<200x72xbf16>, %b: memref<72x136xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<200x136xf32>)
  linalg.matmul {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64}}
    ins(%a, %b : memref<200x72xbf16>, memref<72x136xbf16>) outs(%c : memref<200x136xf32>)
  return
}

// -----

// Split K (split_k = 4 of 16 K tiles): the blocks along z each multiply
// their 4 K tiles (the operands' tiles 4 z + t) and store the raw sums to
// a 4 x 128 x 128 buffer of the host function (a scratch buffer); a second
// kernel adds them up in split order, adds the fill's value, applies the
// epilogue (the bf16 cast) and stores.
// CHECK-LABEL: func.func @split_k
// CHECK: %[[PARTIALS:.*]] = memref.alloc() : memref<4x128x128xf32>
// CHECK: gpu.launch blocks(%{{[a-z0-9]*}}, %{{[a-z0-9]*}}, %[[Z:[a-z0-9]*]]) in ({{.*}} = %c4{{(_[0-9]+)?}})
// CHECK: %[[FIRST:.*]] = arith.muli %[[Z]], %c4{{(_[0-9]+)?}} : index
// CHECK: scf.for
// CHECK: arith.addi %[[FIRST]], %{{.*}} : index
// CHECK: vector.store %{{.*}}, %[[PARTIALS]][%[[Z]], %{{.*}}, %{{.*}}] : memref<4x128x128xf32>, vector<2xf32>
// CHECK: gpu.launch
// CHECK: %[[P0:.*]] = memref.load %[[PARTIALS]][%c0{{[_0-9]*}}, %{{.*}}, %{{.*}}] : memref<4x128x128xf32>
// CHECK: %[[P1:.*]] = memref.load %[[PARTIALS]][%c1{{[_0-9]*}}, %{{.*}}, %{{.*}}]
// CHECK: arith.addf %[[P0]], %[[P1]] : f32
// CHECK: arith.truncf
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<128x128xbf16>
func.func @split_k(%out: memref<128x128xbf16>, %a: memref<128x1024xbf16>, %b: memref<1024x128xbf16>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<128x128xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<128x128xf32>)
  linalg.matmul {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64, split_k = 4 : i64}}
    ins(%a, %b : memref<128x1024xbf16>, memref<1024x128xbf16>) outs(%t : memref<128x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]} {ke.wgmma.epilogue}
    ins(%t : memref<128x128xf32>) outs(%out : memref<128x128xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %r = arith.truncf %x : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}

// -----

func.func @split_batch(%c: memref<2x128x128xf32>, %a: memref<2x128x1024xbf16>, %b: memref<2x1024x128xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x128x128xf32>)
  // expected-error @below {{ke.wgmma: split_k 2 does not split 16 K tiles evenly into parts of at least 1 (and a batch matmul's blocks along z are its batch)}}
  linalg.batch_matmul {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64, split_k = 2 : i64}}
    ins(%a, %b : memref<2x128x1024xbf16>, memref<2x1024x128xbf16>) outs(%c : memref<2x128x128xf32>)
  return
}

// -----

// B stored N x K (nn.Linear's weight) is K-major like A: rows of 64 K
// elements, no transpose ("col"), the same descriptor fields as A.
// CHECK-LABEL: func.func @transposed_b
// CHECK: memref.view {{.*}} to memref<3x128x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
func.func @transposed_b(%c: memref<128x256xf32>, %a: memref<128x128xf16>, %b: memref<256x128xf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x256xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    {ke.wgmma = {block_m = 64 : i64, block_n = 128 : i64, stages = 3 : i64}}
    ins(%a, %b : memref<128x128xf16>, memref<256x128xf16>) outs(%c : memref<128x256xf32>)
  return
}

// -----

// A stored K x M (torch.matmul(A.T, B)): MN-major A tiles like B's (64 K
// rows per 64-column slab, one slab per warpgroup) with wgmma's transpose
// of A ("col"), the MN-major descriptor fields.
// CHECK-LABEL: func.func @transposed_a
// CHECK: memref.view {{.*}} to memref<3x2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[FIELDS:.*]] = arith.constant 4611686293338849280 : i64
// CHECK: arith.ori {{.*}}, %[[FIELDS]]
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
func.func @transposed_a(%c: memref<128x128xf32>, %a: memref<128x128xbf16>, %b: memref<128x128xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64}}
    ins(%a, %b : memref<128x128xbf16>, memref<128x128xbf16>) outs(%c : memref<128x128xf32>)
  return
}

// -----

// TF32 (f32 operands; the sketch marks them only on +tf32 targets): B
// stored N x K, K tiles of 32 f32 elements (128-byte rows), four
// m64nNk8 per tile.
// CHECK-LABEL: func.func @tf32
// CHECK: memref.view {{.*}} to memref<3x128x32xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 4 {bypassL1}
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
func.func @tf32(%c: memref<128x128xf32>, %a: memref<128x128xf32>, %b: memref<128x128xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64}}
    ins(%a, %b : memref<128x128xf32>, memref<128x128xf32>) outs(%c : memref<128x128xf32>)
  return
}

// -----

// TF32 with A stored K x M and B K x N: wgmma transposes only 16-bit
// tiles, so each is first transposed by a kernel of its own (32 x 32 tiles
// through 32 x 33 f32 of shared memory, 32 x 8 threads) into a scratch
// buffer of the host function, which the GEMM kernel reads K-major with
// 16-byte copies (A "row", B "col").
// CHECK-LABEL: func.func @tf32_transposed
// CHECK: %[[AT:.*]] = memref.alloc() : memref<128x64xf32>
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c32{{.*}}, {{.*}} = %c8{{.*}}, {{.*}}) dynamic_shared_memory_size %c4224_i32
// CHECK: memref.view {{.*}} to memref<32x33xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.store {{.*}}, %[[AT]]
// CHECK: %[[BT:.*]] = memref.alloc() : memref<128x64xf32>
// CHECK: gpu.launch
// CHECK: memref.store {{.*}}, %[[BT]]
// CHECK: gpu.launch
// CHECK: memref.view {{.*}} to memref<3x128x32xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<3x128x32xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %[[AT]]{{.*}}, 4 {bypassL1}
// CHECK: nvgpu.device_async_copy %[[BT]]{{.*}}, 4 {bypassL1}
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
func.func @tf32_transposed(%c: memref<128x128xf32>, %a: memref<64x128xf32>, %b: memref<64x128xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64}}
    ins(%a, %b : memref<64x128xf32>, memref<64x128xf32>) outs(%c : memref<128x128xf32>)
  return
}

// -----

// A batch matmul: a batch per block along z, every access indexed by it.
// CHECK-LABEL: func.func @batched
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9]*]], %[[BY:[a-z0-9]*]], %[[BZ:[a-z0-9]*]]) in
// CHECK: nvgpu.device_async_copy %{{.*}}[%[[BZ]],
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[BZ]],
func.func @batched(%c: memref<4x128x128xf32>, %a: memref<4x128x64xbf16>, %b: memref<4x64x128xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x128x128xf32>)
  linalg.batch_matmul {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64}}
    ins(%a, %b : memref<4x128x64xbf16>, memref<4x64x128xbf16>) outs(%c : memref<4x128x128xf32>)
  return
}

// -----

// The epilogue: a bias, an exact GELU (erf) and the cast to bf16 applied to
// each accumulator (the bias loaded per column), stored as bf16 pairs; the
// consumer and the f32 temporary are gone.
// CHECK-LABEL: func.func @epilogue
// CHECK-NOT: memref.alloc
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: memref.load %{{.*}} : memref<256xf32>
// CHECK: math.erf
// CHECK: arith.truncf
// CHECK: vector.store {{.*}} : memref<128x256xbf16>, vector<2xbf16>
// CHECK-NOT: linalg.generic
func.func @epilogue(%out: memref<128x256xbf16>, %a: memref<128x64xbf16>, %b: memref<64x256xbf16>, %bias: memref<256xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.70710678 : f32
  %t = memref.alloc() : memref<128x256xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<128x256xf32>)
  linalg.matmul {ke.wgmma = {block_m = 128 : i64, block_n = 256 : i64, stages = 3 : i64}}
    ins(%a, %b : memref<128x64xbf16>, memref<64x256xbf16>) outs(%t : memref<128x256xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]} {ke.wgmma.epilogue}
    ins(%t, %bias : memref<128x256xf32>, memref<256xf32>) outs(%out : memref<128x256xbf16>) {
  ^bb0(%x: f32, %bv: f32, %o: bf16):
    %y = arith.addf %x, %bv : f32
    %s = arith.mulf %y, %rsqrt2 : f32
    %e = math.erf %s : f32
    %p = arith.addf %e, %one : f32
    %h = arith.mulf %y, %half : f32
    %g = arith.mulf %h, %p : f32
    %r = arith.truncf %g : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}

// -----

// A channels-last convolution (stride 2) as an implicit GEMM: M the 2 x 16
// x 16 output pixels, N the 64 filters, K the 3 x 3 taps' 128 channels. A
// is copied from the input pixel (n, 2 oh + kh, 2 ow + kw) of each row's
// output pixel, 64 channels of one tap per K tile; the filter is a
// 1152 x 64 matrix (B stored K x N, collapsed before the kernel), the
// output a 512 x 64 one (collapsed in the kernel); the epilogue (bias per
// filter, ReLU, f16) reads its bias through the consumer's map over
// (n, oh, ow, f).
// CHECK-LABEL: func.func @conv
// CHECK: memref.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] : memref<3x3x128x64xf16> into memref<1152x64xf16>
// CHECK: gpu.launch
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[OH:.*]] = arith.muli %{{.*}}, %[[C2]] : index
// CHECK: %[[H:.*]] = arith.addi %[[OH]], %{{.*}} : index
// CHECK: nvgpu.device_async_copy %{{.*}}[%{{.*}}, %[[H]], %{{.*}}, %{{.*}}], %{{.*}}, 8 {bypassL1} : memref<2x33x33x128xf16> to memref<3x128x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}} : memref<1152x64xf16> to memref<3x1x64x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK: memref.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] : memref<2x16x16x64xf16> into memref<512x64xf16>
// CHECK: memref.load %{{.*}} : memref<64xf32>
// CHECK: vector.store {{.*}} : memref<512x64xf16>, vector<2xf16>
// CHECK-NOT: linalg.
// CHECK: return
func.func @conv(%out: memref<2x16x16x64xf16>, %i: memref<2x33x33x128xf16>, %f: memref<3x3x128x64xf16>, %bias: memref<64xf32>) {
  %z = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<2x16x16x64xf32>
  linalg.fill ins(%z : f32) outs(%t : memref<2x16x16x64xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>,
                            ke.wgmma = {block_m = 128 : i64, block_n = 64 : i64, stages = 3 : i64}}
    ins(%i, %f : memref<2x33x33x128xf16>, memref<3x3x128x64xf16>) outs(%t : memref<2x16x16x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (n, h, w, f)>, affine_map<(n, h, w, f) -> (f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]} {ke.wgmma.epilogue}
    ins(%t, %bias : memref<2x16x16x64xf32>, memref<64xf32>) outs(%out : memref<2x16x16x64xf16>) {
  ^bb0(%x: f32, %bv: f32, %o: f16):
    %y = arith.addf %x, %bv : f32
    %m = arith.maximumf %y, %z : f32
    %r = arith.truncf %m : f32 to f16
    linalg.yield %r : f16
  }
  return
}

// -----

// TMA (tma = 1), a batch matmul with partial tiles (2 x 200 x 136 x 72;
// A K-major, B stored K x N: MN-major): before the launch, the host makes
// a tensor map of each operand (the aligned pointer, marked with the box of
// one tile: 1 x 128 rows x 64 K for A, 1 x 64 K rows x one 64-column slab
// for B); in the kernel, thread 0 initializes one mbarrier per stage
// (behind the tiles: 3 x (128 + 128) x 128 bytes = 98304), fences them for
// the async proxy and loads tile 0: the barrier expects the stage's 32768
// bytes, then one bulk copy for A and two (slabs) for B, at coordinates
// (column, row, batch). Each K tile waits for its stage's barrier at phase
// (k / 3) & 1 (no cp.async wait, no proxy fence), then a block barrier;
// thread 0 issues the next tile's copies. Out-of-bounds elements of a box
// read as zeros (the tensor map's fill), so there is no masking of loads.
// CHECK-LABEL: func.func @tma_batch
// CHECK: %[[AADDR:.*]] = memref.extract_aligned_pointer_as_index %arg1 : memref<2x200x72xbf16> -> index
// CHECK: %[[AMAP:.*]] = llvm.inttoptr %{{.*}} {ke.tensor_map = {box = array<i64: 1, 128, 64>, swizzle = 128 : i64}} : i64 to !llvm.ptr
// CHECK: %[[BMAP:.*]] = llvm.inttoptr %{{.*}} {ke.tensor_map = {box = array<i64: 1, 64, 64>, swizzle = 128 : i64}} : i64 to !llvm.ptr
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK-COUNT-3: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[AMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[BMAP]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK-NOT: nvvm.fence.proxy
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[AMAP]]
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @tma_batch(%c: memref<2x200x136xf32>, %a: memref<2x200x72xbf16>, %b: memref<2x72x136xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x200x136xf32>)
  linalg.batch_matmul {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64, tma = 1 : i64}}
    ins(%a, %b : memref<2x200x72xbf16>, memref<2x72x136xbf16>) outs(%c : memref<2x200x136xf32>)
  return
}

// -----

// tma = 2 (256 x 128 x 512, 128 x 128 blocks, 3 stages, 8 K tiles): thread
// 0 also initializes a release barrier per stage for the two warpgroups
// (behind the three tile barriers) and fills all three stages first; no
// block barrier in the K loop: after each K tile's wgmma group and the wait
// for the one before, the first thread of each warpgroup releases tile
// k - 1's stage, and thread 0 waits for both releases (phase ((k - 1) / 3)
// & 1) before loading tile k + 2 there.
// CHECK-LABEL: func.func @tma_release
// CHECK: gpu.launch
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c2_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK-COUNT-3: nvvm.mbarrier.arrive.expect_tx
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: arith.cmpi uge
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: scf.if
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @tma_release(%c: memref<256x128xf32>, %a: memref<256x512xbf16>, %b: memref<512x128xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<256x128xf32>)
  linalg.matmul {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64, tma = 2 : i64}}
    ins(%a, %b : memref<256x512xbf16>, memref<512x128xbf16>) outs(%c : memref<256x128xf32>)
  return
}

// -----

func.func @tma_range(%c: memref<128x128xf32>, %a: memref<128x128xbf16>, %b: memref<128x128xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
  // expected-error @below {{ke.wgmma: tma must be 0, 1 or 2}}
  linalg.matmul {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64, tma = 3 : i64}}
    ins(%a, %b : memref<128x128xbf16>, memref<128x128xbf16>) outs(%c : memref<128x128xf32>)
  return
}

// -----

func.func @tma_conv(%o: memref<1x8x8x64xf32>, %i: memref<1x10x10x64xbf16>, %f: memref<3x3x64x64xbf16>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%o : memref<1x8x8x64xf32>)
  // expected-error @below {{ke.wgmma: tma copies whole boxes, and a convolution's A rows are gathered from its input}}
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
                            ke.wgmma = {block_m = 64 : i64, block_n = 64 : i64, stages = 3 : i64, tma = 1 : i64}}
    ins(%i, %f : memref<1x10x10x64xbf16>, memref<3x3x64x64xbf16>) outs(%o : memref<1x8x8x64xf32>)
  return
}

// -----

func.func @conv_channels(%o: memref<1x8x8x64xf32>, %i: memref<1x10x10x32xbf16>, %f: memref<3x3x32x64xbf16>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%o : memref<1x8x8x64xf32>)
  // expected-error @below {{ke.wgmma: a convolution's channels must be a multiple of 64}}
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
                            ke.wgmma = {block_m = 64 : i64, block_n = 64 : i64, stages = 3 : i64}}
    ins(%i, %f : memref<1x10x10x32xbf16>, memref<3x3x32x64xbf16>) outs(%o : memref<1x8x8x64xf32>)
  return
}

// -----

func.func @no_fill(%c: memref<128x128xf32>, %a: memref<128x64xbf16>, %b: memref<64x128xbf16>) {
  // expected-error @below {{ke.wgmma needs the accumulator's linalg.fill right before the matmul}}
  linalg.matmul {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64}}
    ins(%a, %b : memref<128x64xbf16>, memref<64x128xbf16>) outs(%c : memref<128x128xf32>)
  return
}

// -----

func.func @bad_block(%c: memref<128x128xf32>, %a: memref<128x64xbf16>, %b: memref<64x128xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
  // expected-error @below {{ke.wgmma: block 96x128 with 4 stages does not fit a 128x128x64 matmul (blocks multiples of 64 up to 256x256, at least 3 stages, at most 1 K tiles of 64 + 2)}}
  linalg.matmul {ke.wgmma = {block_m = 96 : i64, block_n = 128 : i64, stages = 4 : i64}}
    ins(%a, %b : memref<128x64xbf16>, memref<64x128xbf16>) outs(%c : memref<128x128xf32>)
  return
}

// -----

func.func @unaligned_rows(%c: memref<128x128xf32>, %a: memref<128x60xbf16>, %b: memref<60x128xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
  // expected-error @below {{ke.wgmma: the rows of A and B must be multiples of 8 elements (16 bytes) and N even, not 128x128x60}}
  linalg.matmul {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64}}
    ins(%a, %b : memref<128x60xbf16>, memref<60x128xbf16>) outs(%c : memref<128x128xf32>)
  return
}

// -----


func.func @missing_knob(%c: memref<128x128xf32>, %a: memref<128x64xbf16>, %b: memref<64x128xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
  // expected-error @below {{ke.wgmma: missing integer 'stages'}}
  linalg.matmul {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64}}
    ins(%a, %b : memref<128x64xbf16>, memref<64x128xbf16>) outs(%c : memref<128x128xf32>)
  return
}

// -----

func.func @transposed_epilogue(%out: memref<128x128xf32>, %a: memref<128x64xbf16>, %b: memref<64x128xbf16>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<128x128xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<128x128xf32>)
  linalg.matmul {ke.wgmma = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64}}
    ins(%a, %b : memref<128x64xbf16>, memref<64x128xbf16>) outs(%t : memref<128x128xf32>)
  // expected-error @below {{ke.wgmma.epilogue reads the matmul's result through a permutation}}
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]} {ke.wgmma.epilogue}
    ins(%t : memref<128x128xf32>) outs(%out : memref<128x128xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

func.func @too_many_rows(%c: memref<4194368x64xf32>, %a: memref<4194368x64xbf16>, %b: memref<64x64xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4194368x64xf32>)
  // expected-error @below {{ke.wgmma: 65537 tile rows exceed the grid's y (65535)}}
  linalg.matmul {ke.wgmma = {block_m = 64 : i64, block_n = 64 : i64, stages = 3 : i64}}
    ins(%a, %b : memref<4194368x64xbf16>, memref<64x64xbf16>) outs(%c : memref<4194368x64xf32>)
  return
}

// RUN: ke-opt %s --split-input-file --verify-diagnostics --ke-gpu-ffma-matmuls | FileCheck %s

// An f32 matmul marked by gpu.ffma (128x128 blocks, K tiles of 8, 3
// stages; B K x N) becomes one kernel: 2 x 2 blocks, all along the grid's
// x, of 256 threads (8 warps
// of 32 x 64), 3 x 8 x (128 + 4) f32 tiles of A and of B in dynamic shared
// memory (25344 bytes), tiles 0 and 1 copied before the loop (A stored
// M x K: four 4-byte cp.async per thread written transposed, no L1 bypass;
// B: one 16-byte cp.async), then per K tile: wait (one group in flight),
// barrier, the copies two tiles ahead, a commit, and eight K steps of four
// 16-byte shared loads and 16 vector FMAs (8 rows x 2 vectors of 4). The
// fill is gone: its value is added to each result as it is stored, 16
// vectors of 4 per thread.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.matmul
// CHECK: %[[SMEM:.*]] = arith.constant 25344 : i32
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c4, {{.*}} = %c1{{(_[0-9]+)?}}, {{.*}}) {{.*}} dynamic_shared_memory_size %[[SMEM]]
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<3x8x132xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<3x8x132xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: nvgpu.device_async_copy {{.*}}, 1 : memref<256x64xf32>
// CHECK: nvgpu.device_async_copy {{.*}}, 4 {bypassL1} : memref<64x256xf32>
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>,
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK-COUNT-4: nvgpu.device_async_copy {{.*}}, 1 :
// CHECK: nvgpu.device_async_copy {{.*}}, 4 {bypassL1}
// CHECK: }
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-COUNT-4: vector.load {{.*}} : memref<3x8x132xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-16: vector.fma
// CHECK: scf.yield
// CHECK-COUNT-16: vector.store {{.*}} : memref<256x256xf32>, vector<4xf32>
func.func @matmul(%c: memref<256x256xf32>, %a: memref<256x64xf32>, %b: memref<64x256xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<256x256xf32>)
  linalg.matmul {ke.ffma = {block_m = 128 : i64, block_n = 128 : i64, k_tile = 8 : i64, stages = 3 : i64}}
    ins(%a, %b : memref<256x64xf32>, memref<64x256xf32>) outs(%c : memref<256x256xf32>)
  return
}

// -----

// nn.Linear: B stored N x K is copied element-wise and written transposed
// (no 16-byte copy); thread_n 16 gives 8 x 16 results per thread (warp
// tiles of 32 x 128, four B vectors per K step); the bias and ReLU of the
// marked consumer run on each result before it is stored, and the consumer
// and its temporary are gone. A partial tile (M = 100, N = 200 in blocks of
// 64 x 128; K = 300 in tiles of 8) zero-fills the copies past the operands
// (a source size of 0) and guards the stores.
// CHECK-LABEL: func.func @linear
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.alloc
// CHECK: memref.view {{.*}} to memref<2x8x68xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x8x132xf32, #gpu.address_space<workgroup>>
// CHECK: arith.select
// CHECK: nvgpu.device_async_copy {{.*}}, 1, %{{.*}} : memref<100x300xf32>
// CHECK-NOT: bypassL1
// CHECK: scf.for
// CHECK-COUNT-2: vector.load {{.*}} : memref<2x8x68xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-4: vector.load {{.*}} : memref<2x8x132xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-32: vector.fma
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: vector.store {{.*}} : memref<100x200xf32>, vector<4xf32>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @linear(%out: memref<100x200xf32>, %x: memref<100x300xf32>, %w: memref<200x300xf32>, %bias: memref<200xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<100x200xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<100x200xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    {ke.ffma = {block_m = 64 : i64, block_n = 128 : i64, k_tile = 8 : i64, stages = 2 : i64, thread_n = 16 : i64}}
    ins(%x, %w : memref<100x300xf32>, memref<200x300xf32>) outs(%t : memref<100x200xf32>)
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} {ke.ffma.epilogue}
    ins(%t, %bias : memref<100x200xf32>, memref<200xf32>) outs(%out : memref<100x200xf32>) {
  ^bb0(%v: f32, %bb: f32, %o: f32):
    %s = arith.addf %v, %bb : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  }
  memref.dealloc %t : memref<100x200xf32>
  return
}

// -----

// N = 53 is no multiple of 4: each result is stored on its own, guarded.
// A stored K x M is copied 16 bytes at a time along M (M = 64).
// CHECK-LABEL: func.func @odd
// CHECK: nvgpu.device_async_copy {{.*}}, 4 {bypassL1} : memref<16x64xf32>
// CHECK-NOT: vector.store
// CHECK: memref.store {{.*}} : memref<64x53xf32>
func.func @odd(%c: memref<64x53xf32>, %a: memref<16x64xf32>, %b: memref<16x53xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x53xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    {ke.ffma = {block_m = 32 : i64, block_n = 64 : i64, k_tile = 8 : i64, stages = 2 : i64}}
    ins(%a, %b : memref<16x64xf32>, memref<16x53xf32>) outs(%c : memref<64x53xf32>)
  return
}

// -----

func.func @thread_n(%c: memref<64x64xf32>, %a: memref<64x64xf32>, %b: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  // expected-error @+1 {{ke.ffma: thread_n must be 8 or 16}}
  linalg.matmul {ke.ffma = {block_m = 32 : i64, block_n = 64 : i64, k_tile = 8 : i64, stages = 2 : i64, thread_n = 12 : i64}}
    ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @block(%c: memref<64x64xf32>, %a: memref<64x64xf32>, %b: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  // expected-error @+1 {{ke.ffma: block 48x64 is not made of 32x64 warp tiles (at most 32 warps)}}
  linalg.matmul {ke.ffma = {block_m = 48 : i64, block_n = 64 : i64, k_tile = 8 : i64, stages = 2 : i64}}
    ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @stages(%c: memref<64x64xf32>, %a: memref<64x64xf32>, %b: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  // expected-error @+1 {{ke.ffma: k_tile must be 1-32, stages at least 2, group_m positive}}
  linalg.matmul {ke.ffma = {block_m = 32 : i64, block_n = 64 : i64, k_tile = 8 : i64, stages = 1 : i64}}
    ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @f16(%c: memref<64x64xf32>, %a: memref<64x64xf16>, %b: memref<64x64xf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  // expected-error @+1 {{ke.ffma: f32 operands, or a 16-bit convolution's}}
  linalg.matmul {ke.ffma = {block_m = 32 : i64, block_n = 64 : i64, k_tile = 8 : i64, stages = 2 : i64}}
    ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @missing(%c: memref<64x64xf32>, %a: memref<64x64xf32>, %b: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  // expected-error @+1 {{k_tile}}
  linalg.matmul {ke.ffma = {block_m = 32 : i64, block_n = 64 : i64, stages = 2 : i64}}
    ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// A channels-last convolution written back channels-first (PyTorch's
// layout): the marked linalg.transpose is the epilogue, applied as each
// result is stored. The output stores the GEMM's rows (output columns, 8
// of them, a multiple of 4) innermost, so a thread's 4 consecutive rows of
// one channel are one 16-byte store into the NCHW output; the temporary
// and the transpose are gone.
// CHECK-LABEL: func.func @conv_nchw_out
// CHECK-NOT: linalg.transpose
// CHECK-NOT: memref.alloc
// CHECK: scf.for
// CHECK: scf.yield
// CHECK-NOT: memref.store
// CHECK-COUNT-16: vector.store {{.*}} : memref<2x64x8x8xf32>, vector<4xf32>
// CHECK-NOT: vector.store
func.func @conv_nchw_out(%out: memref<2x64x8x8xf32>, %i: memref<2x10x10x32xf32>, %f: memref<3x3x32x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<2x8x8x64xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<2x8x8x64xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
                            ke.ffma = {block_m = 64 : i64, block_n = 64 : i64, k_tile = 8 : i64, stages = 2 : i64}}
    ins(%i, %f : memref<2x10x10x32xf32>, memref<3x3x32x64xf32>) outs(%t : memref<2x8x8x64xf32>)
  linalg.transpose ins(%t : memref<2x8x8x64xf32>) outs(%out : memref<2x64x8x8xf32>) permutation = [0, 3, 1, 2] {ke.ffma.epilogue}
  memref.dealloc %t : memref<2x8x8x64xf32>
  return
}

// -----

// Output rows of 7 columns: each result is stored on its own, at its
// channels-first place (n, f, oh, ow) with ow = row mod 7, after the
// epilogue's bias (indexed by the channel, the epilogue's loop 1) and
// ReLU. M = 98 in blocks of 64 guards the rows.
// CHECK-LABEL: func.func @conv_nchw_bias
// CHECK-NOT: linalg.generic
// CHECK: scf.yield
// CHECK-NOT: vector.store
// CHECK: scf.if
// CHECK: arith.remui %{{.*}}, %c7
// CHECK: memref.load %{{.*}} : memref<64xf32>
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: memref.store {{.*}} : memref<2x64x7x7xf32>
#nchw = affine_map<(n, f, h, w) -> (n, f, h, w)>
#nhwc = affine_map<(n, f, h, w) -> (n, h, w, f)>
#chan = affine_map<(n, f, h, w) -> (f)>
func.func @conv_nchw_bias(%out: memref<2x64x7x7xf32>, %i: memref<2x9x9x32xf32>, %f: memref<3x3x32x64xf32>, %bias: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<2x7x7x64xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<2x7x7x64xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
                            ke.ffma = {block_m = 64 : i64, block_n = 64 : i64, k_tile = 8 : i64, stages = 2 : i64}}
    ins(%i, %f : memref<2x9x9x32xf32>, memref<3x3x32x64xf32>) outs(%t : memref<2x7x7x64xf32>)
  linalg.generic {indexing_maps = [#nhwc, #chan, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} {ke.ffma.epilogue}
    ins(%t, %bias : memref<2x7x7x64xf32>, memref<64xf32>) outs(%out : memref<2x64x7x7xf32>) {
  ^bb0(%v: f32, %bb: f32, %o: f32):
    %s = arith.addf %v, %bb : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  }
  memref.dealloc %t : memref<2x7x7x64xf32>
  return
}

// -----

// A channels-last 3-D convolution is an implicit GEMM too: M the output
// voxels (n, od, oh, ow), K the taps (kd, kh, kw) by the channels; the
// input element of row m and column k is (n, od + kd, oh + kh, ow + kw, c)
// (stride and dilation 1), tap kd * 9 + kh * 3 + kw of k / 8. The filter
// and the output are matrices of their rows.
// CHECK-LABEL: func.func @conv3d
// CHECK-NOT: linalg.conv_3d_ndhwc_dhwcf
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3], [4]] : memref<3x3x3x8x64xf32> into memref<216x64xf32>
// CHECK: arith.divui %{{.*}}, %c8
// CHECK: arith.remui %{{.*}}, %c8
// CHECK: nvgpu.device_async_copy {{.*}} : memref<2x6x6x6x8xf32> to
// CHECK: scf.for
// CHECK: vector.store {{.*}} : memref<128x64xf32>, vector<4xf32>
func.func @conv3d(%out: memref<2x4x4x4x64xf32>, %i: memref<2x6x6x6x8xf32>, %f: memref<3x3x3x8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<2x4x4x4x64xf32>)
  linalg.conv_3d_ndhwc_dhwcf {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>,
                              ke.ffma = {block_m = 64 : i64, block_n = 64 : i64, k_tile = 8 : i64, stages = 2 : i64}}
    ins(%i, %f : memref<2x6x6x6x8xf32>, memref<3x3x3x8x64xf32>) outs(%out : memref<2x4x4x4x64xf32>)
  return
}

// -----

// A channels-last 1-D convolution: M the output positions (n, ow), K the
// taps by the channels; the input element of row m and column k is (n,
// ow * 2 + (k / 16) * 3, k % 16) at stride 2 and dilation 3.
// CHECK-LABEL: func.func @conv1d
// CHECK-NOT: linalg.conv_1d_nwc_wcf
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : memref<5x16x64xf32> into memref<80x64xf32>
// CHECK: arith.divui %{{.*}}, %c16
// CHECK: arith.remui %{{.*}}, %c16
// CHECK: arith.muli %{{.*}}, %c2
// CHECK: arith.muli %{{.*}}, %c3
// CHECK: nvgpu.device_async_copy {{.*}} : memref<2x40x16xf32> to
// CHECK: vector.store {{.*}} : memref<14x64xf32>, vector<4xf32>
func.func @conv1d(%out: memref<2x7x64xf32>, %i: memref<2x40x16xf32>, %f: memref<5x16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<2x7x64xf32>)
  linalg.conv_1d_nwc_wcf {dilations = dense<3> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>,
                          ke.ffma = {block_m = 64 : i64, block_n = 64 : i64, k_tile = 8 : i64, stages = 2 : i64}}
    ins(%i, %f : memref<2x40x16xf32>, memref<5x16x64xf32>) outs(%out : memref<2x7x64xf32>)
  return
}

// -----

// The mma.sync variant (`mma = 1`, offered on targets that allow TF32):
// the same blocks, warps and copies, shared rows padded by 8 (a warp's
// fragment reads, rows t and columns g of 4 x 8 lanes, then hit 32 banks:
// 3 x 16 x 136 f32 tiles), and per K step of 8 each warp's 32 x 64 tile as
// 2 x 8 m16n8k8 f32 mma.sync (A fragments of 4 shared loads, B of 2),
// which ke-gpu-vector-to-mma makes TF32 or 3xTF32. Each thread stores 2 x
// 8 x 2 pairs of adjacent results.
// CHECK-LABEL: func.func @matmul_mma
// CHECK: memref.view {{.*}} to memref<3x16x136xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<3x16x136xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>,
// CHECK-COUNT-4: memref.load {{.*}} : memref<3x16x136xf32, #gpu.address_space<workgroup>>
// CHECK: vector.from_elements {{.*}} : vector<4x1xf32>
// CHECK-COUNT-32: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8]} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: scf.yield
// CHECK-COUNT-32: vector.store {{.*}} : memref<256x256xf32>, vector<2xf32>
func.func @matmul_mma(%c: memref<256x256xf32>, %a: memref<256x64xf32>, %b: memref<64x256xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<256x256xf32>)
  linalg.matmul {ke.ffma = {block_m = 128 : i64, block_n = 128 : i64, k_tile = 16 : i64, stages = 3 : i64, group_m = 1 : i64, thread_n = 8 : i64, mma = 1 : i64}}
    ins(%a, %b : memref<256x64xf32>, memref<64x256xf32>) outs(%c : memref<256x256xf32>)
  return
}

// -----

func.func @mma_k_tile(%c: memref<256x256xf32>, %a: memref<256x64xf32>, %b: memref<64x256xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<256x256xf32>)
  // expected-error @+1 {{ke.ffma: with mma, k_tile must be a multiple of 8}}
  linalg.matmul {ke.ffma = {block_m = 128 : i64, block_n = 128 : i64, k_tile = 4 : i64, stages = 3 : i64, mma = 1 : i64}}
    ins(%a, %b : memref<256x64xf32>, memref<64x256xf32>) outs(%c : memref<256x256xf32>)
  return
}

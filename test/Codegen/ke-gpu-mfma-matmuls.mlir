// RUN: ke-opt %s --split-input-file --verify-diagnostics --ke-gpu-mfma-matmuls --canonicalize --cse | FileCheck %s
// RUN: ke-opt %s --split-input-file --verify-diagnostics --ke-gpu-mfma-matmuls=emulate=true --canonicalize --cse | FileCheck %s --check-prefix=EMU

// A 40x48x32 bf16 matmul on 32x32 blocks of two waves (16x32 each): a 2x2
// grid (partial tiles along M and N), 128 threads; LDS tiles of 16 K
// stored as the operands are, rows padded by 8 elements; the stage after
// this one loaded into registers (the loop's iter_args) while this one
// multiplies; A fragments 4 contiguous K (one 8-byte read), B's gathered
// down K; two MFMAs per wave and 16 K; stores masked past M and N, the
// fill's value added.
// CHECK-LABEL: func.func @matmul
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: %[[A:.*]] = memref.alloc() : memref<32x24xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[B:.*]] = memref.alloc() : memref<16x40xbf16, #gpu.address_space<workgroup>>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<40x32xbf16>, vector<8xbf16>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<32x48xbf16>, vector<8xbf16>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xbf16>, vector<8xbf16>, vector<4xf32>, vector<4xf32>)
// CHECK-NEXT: gpu.barrier
// CHECK: vector.store %{{.*}}, %[[A]]{{.*}} {alignment = 16 : i64}
// CHECK: vector.store %{{.*}}, %[[B]]{{.*}} {alignment = 16 : i64}
// CHECK: gpu.barrier
// CHECK: arith.minui
// CHECK: vector.load %{{.*}} : memref<40x32xbf16>, vector<8xbf16>
// CHECK: vector.load %{{.*}} : memref<32x48xbf16>, vector<8xbf16>
// CHECK: %[[AF:.*]] = vector.load %[[A]]{{.*}} {alignment = 8 : i64} : memref<32x24xbf16, #gpu.address_space<workgroup>>, vector<4xbf16>
// CHECK-COUNT-4: memref.load %[[B]]
// CHECK: %[[BF:.*]] = vector.from_elements
// CHECK: amdgpu.mfma 16x16x16 %[[AF]] * %[[BF]]
// CHECK: amdgpu.mfma 16x16x16 %[[AF]] *
// CHECK-NOT: amdgpu.mfma
// CHECK: scf.yield
// CHECK: scf.if
// CHECK-NEXT: vector.extract %{{.*}}[0] : f32 from vector<4xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: memref.store %{{.*}} : memref<40x48xf32>
// CHECK-NOT: linalg.
// EMU-LABEL: func.func @matmul
// EMU: memref.alloc() : memref<2x64x8xbf16, #gpu.address_space<workgroup>>
// EMU-NOT: amdgpu.mfma
// EMU: vector.store {{.*}} : memref<2x64x8xbf16, #gpu.address_space<workgroup>>, vector<4xbf16>
// EMU: vector.store {{.*}} : memref<2x64x8xbf16, #gpu.address_space<workgroup>>, vector<4xbf16>
// EMU-NEXT: gpu.barrier
// EMU: scf.for
// EMU-COUNT-4: math.fma
// EMU: gpu.barrier
// EMU-NOT: amdgpu.mfma
func.func @matmul(%c: memref<40x48xf32>, %a: memref<40x32xbf16>, %b: memref<32x48xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<40x48xf32>)
  linalg.matmul {ke.mfma = {block_m = 32 : i64, block_n = 32 : i64, waves_m = 2 : i64, waves_n = 1 : i64, k_tile = 16 : i64, group_m = 1 : i64}}
    ins(%a, %b : memref<40x32xbf16>, memref<32x48xbf16>) outs(%c : memref<40x48xf32>)
  return
}

// -----

// A stored K x M and B N x K (f16): A's LDS tile is K x M (fragments
// gathered), B's N x K (one read each); whole tiles: no masks.
// CHECK-LABEL: func.func @transposed
// CHECK: %[[A:.*]] = memref.alloc() : memref<16x40xf16, #gpu.address_space<workgroup>>
// CHECK: %[[B:.*]] = memref.alloc() : memref<32x24xf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK-COUNT-4: memref.load %[[A]]
// CHECK: vector.from_elements
// CHECK: vector.load %[[B]]{{.*}} : memref<32x24xf16, #gpu.address_space<workgroup>>, vector<4xf16>
// CHECK: amdgpu.mfma 16x16x16 {{.*}} : vector<4xf16>, vector<4xf16>, vector<4xf32>
// CHECK: scf.yield
// CHECK-NOT: scf.if
// CHECK: memref.store
func.func @transposed(%c: memref<32x32xf32>, %a: memref<64x32xf16>, %b: memref<32x64xf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x32xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    {ke.mfma = {block_m = 32 : i64, block_n = 32 : i64, waves_m = 1 : i64, waves_n = 1 : i64, k_tile = 16 : i64}}
    ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<32x32xf32>)
  return
}

// -----

// The epilogue (bias, bf16 result) runs on each accumulator; the temporary
// and the consumer are gone; a batch per block along z.
// CHECK-LABEL: func.func @batched_epilogue
// CHECK-NOT: memref.alloc() : memref<2x32x32xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c2)
// CHECK: amdgpu.mfma
// CHECK: %[[BIAS:.*]] = memref.load %{{.*}} : memref<32xf32>
// CHECK: arith.addf %{{.*}}, %[[BIAS]]
// CHECK: %[[T:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.store %[[T]], %{{.*}} : memref<2x32x32xbf16>
// CHECK-NOT: linalg.generic
func.func @batched_epilogue(%out: memref<2x32x32xbf16>, %a: memref<2x32x16xbf16>, %b: memref<2x16x32xbf16>, %bias: memref<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<2x32x32xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<2x32x32xf32>)
  linalg.batch_matmul {ke.mfma = {block_m = 32 : i64, block_n = 32 : i64, waves_m = 2 : i64, waves_n = 2 : i64, k_tile = 16 : i64}}
    ins(%a, %b : memref<2x32x16xbf16>, memref<2x16x32xbf16>) outs(%t : memref<2x32x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (j)>, affine_map<(b, i, j) -> (b, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel"]} {ke.mfma.epilogue}
    ins(%t, %bias : memref<2x32x32xf32>, memref<32xf32>) outs(%out : memref<2x32x32xbf16>) {
  ^bb0(%x: f32, %bv: f32, %o: bf16):
    %y = arith.addf %x, %bv : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %t : memref<2x32x32xf32>
  return
}

// -----

// A channels-last convolution: A's rows are output pixels, read from the
// input at (n, oh + kh, ow + kw, c) 8 channels at a time.
// CHECK-LABEL: func.func @conv
// CHECK: gpu.launch
// CHECK: vector.load %{{.*}} : memref<1x6x6x16xf16>, vector<8xf16>
// CHECK: amdgpu.mfma
// CHECK: memref.store %{{.*}} : memref<16x32xf32>
func.func @conv(%o: memref<1x4x4x32xf32>, %i: memref<1x6x6x16xf16>, %f: memref<3x3x16x32xf16>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%o : memref<1x4x4x32xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
                            ke.mfma = {block_m = 16 : i64, block_n = 32 : i64, waves_m = 1 : i64, waves_n = 2 : i64, k_tile = 32 : i64}}
    ins(%i, %f : memref<1x6x6x16xf16>, memref<3x3x16x32xf16>) outs(%o : memref<1x4x4x32xf32>)
  return
}

// -----

func.func @f32_operands(%c: memref<32x32xf32>, %a: memref<32x32xf32>, %b: memref<32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x32xf32>)
  // expected-error @below {{ke.mfma takes f16 or bf16 operands}}
  linalg.matmul {ke.mfma = {block_m = 32 : i64, block_n = 32 : i64, waves_m = 1 : i64, waves_n = 1 : i64, k_tile = 16 : i64}}
    ins(%a, %b : memref<32x32xf32>, memref<32x32xf32>) outs(%c : memref<32x32xf32>)
  return
}

// -----

func.func @bad_waves(%c: memref<32x32xf32>, %a: memref<32x32xbf16>, %b: memref<32x32xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x32xf32>)
  // expected-error @below {{ke.mfma: block 32x32 on 4x1 waves with K tiles of 16 does not split into 16x16x16 MFMAs (at most 16 waves, group_m positive)}}
  linalg.matmul {ke.mfma = {block_m = 32 : i64, block_n = 32 : i64, waves_m = 4 : i64, waves_n = 1 : i64, k_tile = 16 : i64}}
    ins(%a, %b : memref<32x32xbf16>, memref<32x32xbf16>) outs(%c : memref<32x32xf32>)
  return
}

// -----

func.func @unaligned_rows(%c: memref<32x32xf32>, %a: memref<32x20xbf16>, %b: memref<20x32xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x32xf32>)
  // expected-error @below {{ke.mfma: the rows of A and B (and a convolution's channels) must be multiples of 8 elements, not 32x32x20}}
  linalg.matmul {ke.mfma = {block_m = 32 : i64, block_n = 32 : i64, waves_m = 1 : i64, waves_n = 1 : i64, k_tile = 16 : i64}}
    ins(%a, %b : memref<32x20xbf16>, memref<20x32xbf16>) outs(%c : memref<32x32xf32>)
  return
}

// -----

func.func @missing_knob(%c: memref<32x32xf32>, %a: memref<32x32xbf16>, %b: memref<32x32xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x32xf32>)
  // expected-error @below {{ke.mfma: missing integer 'k_tile'}}
  linalg.matmul {ke.mfma = {block_m = 32 : i64, block_n = 32 : i64, waves_m = 1 : i64, waves_n = 1 : i64}}
    ins(%a, %b : memref<32x32xbf16>, memref<32x32xbf16>) outs(%c : memref<32x32xf32>)
  return
}

// -----

func.func @no_fill(%c: memref<32x32xf32>, %a: memref<32x32xbf16>, %b: memref<32x32xbf16>) {
  // expected-error @below {{ke.mfma needs the accumulator's linalg.fill right before the matmul}}
  linalg.matmul {ke.mfma = {block_m = 32 : i64, block_n = 32 : i64, waves_m = 1 : i64, waves_n = 1 : i64, k_tile = 16 : i64}}
    ins(%a, %b : memref<32x32xbf16>, memref<32x32xbf16>) outs(%c : memref<32x32xf32>)
  return
}

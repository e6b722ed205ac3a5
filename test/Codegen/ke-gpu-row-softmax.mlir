// RUN: ke-opt %s --split-input-file --verify-diagnostics --ke-gpu-row-softmax --canonicalize --cse | FileCheck %s

// ViT's attention rows: 197 f32 (prime) on 32 threads per row, 8 rows per
// block: ceil(300 / 8) = 38 blocks of 256 threads. Pass 1 reads each
// thread's scalars at columns 32 k + lane for k < 7 (past 197 skipped) into
// an online maximum and sum; the row's pairs combine by xor shuffles 16 ..
// 1; pass 2 stores exp(x - max) * (1 / sum) for the same columns. Rows past
// 300 (the last block's 4 extra) are skipped.
// CHECK-LABEL: func.func @prime_rows
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c38, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK: %[[R:.*]]:2 = scf.for %{{.*}} = %c0 to %c7 step %c1 iter_args(%[[M:.*]] = %cst{{.*}}, %[[S:.*]] = %cst{{.*}}) -> (f32, f32)
// CHECK: arith.cmpi ult, %{{.*}}, %c197
// CHECK: scf.if %{{.*}} -> (f32, f32)
// CHECK: vector.load %{{.*}} : memref<300x197xf32>, vector<1xf32>
// CHECK: arith.maximumf %[[M]]
// CHECK: math.exp
// CHECK: arith.subf %[[M]]
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[M]], %[[S]] : f32, f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK-NOT: gpu.barrier
// CHECK: arith.divf %cst{{.*}}, %{{.*}} : f32
// CHECK: scf.for %{{.*}} = %c0 to %c7 step %c1 {
// CHECK: scf.if
// CHECK: math.exp
// CHECK: vector.store %{{.*}} : memref<300x197xf32>, vector<1xf32>
// CHECK-NOT: linalg.softmax
func.func @prime_rows(%x: memref<300x197xf32>, %y: memref<300x197xf32>) {
  linalg.softmax {ke.softmax = {row_threads = 32 : i64, rows = 8 : i64, vec = 1 : i64, warp = 32 : i64}}
    dimension(1) ins(%x : memref<300x197xf32>) outs(%y : memref<300x197xf32>)
  return
}

// -----

// f16 rows of 1000 in a 3-D tensor (rows 4 x 6 collapsed) on 128 threads
// per row (four warps), vectors of 8: every element computed in f32 and
// rounded on the store (one vector per thread: the loops fold away); each warp's pair goes to shared memory, and after
// a barrier every thread combines its row's four.
// CHECK-LABEL: func.func @f16_rows
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c24, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128,
// CHECK: memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : memref<4x6x1000xf16> into memref<24x1000xf16>
// CHECK: vector.load %{{.*}} : memref<24x1000xf16>, vector<8xf16>
// CHECK: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK: gpu.shuffle  xor
// CHECK: %[[MS:.*]] = memref.alloc() : memref<1x4xf32, #gpu.address_space<workgroup>>
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[MS]]
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.load %[[MS]]
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// CHECK: vector.store %{{.*}} : memref<24x1000xf16>, vector<8xf16>
func.func @f16_rows(%x: memref<4x6x1000xf16>, %y: memref<4x6x1000xf16>) {
  linalg.softmax {ke.softmax = {row_threads = 128 : i64, rows = 1 : i64, vec = 8 : i64, warp = 32 : i64}}
    dimension(2) ins(%x : memref<4x6x1000xf16>) outs(%y : memref<4x6x1000xf16>)
  return
}

// -----

func.func @missing_knob(%x: memref<8x100xf32>, %y: memref<8x100xf32>) {
  // expected-error @below {{ke.softmax: missing integer 'warp'}}
  linalg.softmax {ke.softmax = {row_threads = 32 : i64, rows = 8 : i64, vec = 4 : i64}}
    dimension(1) ins(%x : memref<8x100xf32>) outs(%y : memref<8x100xf32>)
  return
}

// -----

func.func @vec_not_dividing(%x: memref<8x100xf32>, %y: memref<8x100xf32>) {
  // expected-error @below {{ke.softmax: vec must divide the row}}
  linalg.softmax {ke.softmax = {row_threads = 32 : i64, rows = 8 : i64, vec = 8 : i64, warp = 32 : i64}}
    dimension(1) ins(%x : memref<8x100xf32>) outs(%y : memref<8x100xf32>)
  return
}

// -----

func.func @not_last_dimension(%x: memref<8x100xf32>, %y: memref<8x100xf32>) {
  // expected-error @below {{ke.softmax: expects the softmax over the last dimension}}
  linalg.softmax {ke.softmax = {row_threads = 32 : i64, rows = 8 : i64, vec = 4 : i64, warp = 32 : i64}}
    dimension(0) ins(%x : memref<8x100xf32>) outs(%y : memref<8x100xf32>)
  return
}

// -----

func.func @strided(%x: memref<8x100xf32, strided<[128, 1]>>, %y: memref<8x100xf32, strided<[128, 1]>>) {
  // expected-error @below {{ke.softmax: expects static, contiguous rows}}
  linalg.softmax {ke.softmax = {row_threads = 32 : i64, rows = 8 : i64, vec = 4 : i64, warp = 32 : i64}}
    dimension(1) ins(%x : memref<8x100xf32, strided<[128, 1]>>) outs(%y : memref<8x100xf32, strided<[128, 1]>>)
  return
}

// -----

func.func @partial_warp(%x: memref<8x100xf32>, %y: memref<8x100xf32>) {
  // expected-error @below {{ke.softmax: a block must be whole warps}}
  linalg.softmax {ke.softmax = {row_threads = 16 : i64, rows = 1 : i64, vec = 4 : i64, warp = 32 : i64}}
    dimension(1) ins(%x : memref<8x100xf32>) outs(%y : memref<8x100xf32>)
  return
}

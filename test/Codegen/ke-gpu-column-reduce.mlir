// RUN: ke-opt %s --split-input-file --verify-diagnostics --ke-gpu-column-reduce | FileCheck %s

// A sum of squares over the rows of a 100 x 70 matrix (BatchNorm's second
// moment): 3 blocks of 32 columns (70 is partial: columns past it neither
// read nor written) by 4 threads along the rows; each thread reads 2 rows
// per step (8 rows a step for the block) up to row 96, then the 4 rows
// left one at a time. The partial results meet in shared memory; after a
// barrier thread (x, 0) adds them in order of y, then the fill's value
// (the fill goes), and stores.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}}) threads({{.*}}) in ({{.*}} = %c32, {{.*}} = %c4{{(_[0-9]+)?}},
// CHECK: %[[INSIDE:.*]] = arith.cmpi ult, %{{.*}}, %c70
// CHECK: scf.if %[[INSIDE]] -> (f32)
// CHECK: scf.for %{{.*}} = %{{.*}} to %c96 step %c8
// CHECK-COUNT-2: memref.load %arg0
// CHECK: scf.for %{{.*}} = %{{.*}} to %c100 step %c4
// CHECK: } else {
// CHECK-NEXT: scf.yield %cst
// CHECK: memref.alloc() : memref<4x32xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-COUNT-3: memref.load %alloc
// CHECK: memref.store %{{.*}}, %arg1
// CHECK-NOT: linalg.generic
#rows = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>
func.func @sum_of_squares(%x: memref<100x70xf32>, %o: memref<70xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%o : memref<70xf32>)
  linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
    ins(%x : memref<100x70xf32>) outs(%o : memref<70xf32>)
    attrs = {ke.colreduce = {threads_x = 32 : i64, threads_y = 4 : i64, unroll = 2 : i64}} {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// torch.amax(x, dim=1) of a 4 x 64 x 128 tensor into a kept dimension of
// extent 1: blocks of 64 columns times 4 batches (8 blocks), one thread
// along the rows (no shared memory, no barrier), 8 rows a step; whole
// tiles, so nothing is guarded. No fill: the output's element is the init.
// CHECK-LABEL: func.func @amax_kept_dim
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c8, {{.*}}) threads({{.*}}) in ({{.*}} = %c64, {{.*}} = %c1{{(_[0-9]+)?}},
// CHECK-NOT: scf.if %{{.*}} -> (f32)
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for %{{.*}} = %{{.*}} to %c64{{(_[0-9]+)?}} step %c8
// CHECK-COUNT-8: arith.maximumf
// CHECK-NOT: gpu.barrier
// CHECK: scf.if
// CHECK: %[[INIT:.*]] = memref.load %arg1[%{{.*}}, %c0{{(_[0-9]+)?}}, %{{.*}}]
// CHECK: arith.maximumf %[[INIT]]
// CHECK: memref.store %{{.*}}, %arg1[%{{.*}}, %c0{{(_[0-9]+)?}}, %{{.*}}]
#in3 = affine_map<(b, r, c) -> (b, r, c)>
#kept = affine_map<(b, r, c) -> (b, 0, c)>
func.func @amax_kept_dim(%x: memref<4x64x128xf32>, %o: memref<4x1x128xf32>) {
  linalg.generic {indexing_maps = [#in3, #kept], iterator_types = ["parallel", "reduction", "parallel"]}
    ins(%x : memref<4x64x128xf32>) outs(%o : memref<4x1x128xf32>)
    attrs = {ke.colreduce = {threads_x = 64 : i64, threads_y = 1 : i64, unroll = 8 : i64}} {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %b : f32
    linalg.yield %m : f32
  }
  return
}

// -----

#rows = affine_map<(d0, d1) -> (d0, d1)>
#last = affine_map<(d0, d1) -> (d0)>
func.func @row_reduction(%x: memref<8x64xf32>, %o: memref<8xf32>) {
  // expected-error @+1 {{ke.colreduce: not a reduction along a loop other than the innermost}}
  linalg.generic {indexing_maps = [#rows, #last], iterator_types = ["parallel", "reduction"]}
    ins(%x : memref<8x64xf32>) outs(%o : memref<8xf32>)
    attrs = {ke.colreduce = {threads_x = 32 : i64, threads_y = 4 : i64, unroll = 2 : i64}} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#rows = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>
func.func @too_many_threads(%x: memref<64x64xf32>, %o: memref<64xf32>) {
  // expected-error @+1 {{ke.colreduce must be a dictionary of positive 'threads_x', 'threads_y' and 'unroll', with at most 1024 threads}}
  linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
    ins(%x : memref<64x64xf32>) outs(%o : memref<64xf32>)
    attrs = {ke.colreduce = {threads_x = 256 : i64, threads_y = 8 : i64, unroll = 2 : i64}} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#rows = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>
func.func @not_bufferized(%x: tensor<64x64xf32>, %o: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{ke.colreduce: the reduction must be bufferized}}
  %r = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
    ins(%x : tensor<64x64xf32>) outs(%o : tensor<64xf32>)
    attrs = {ke.colreduce = {threads_x = 32 : i64, threads_y = 8 : i64, unroll = 2 : i64}} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// A mean whose init is no fill (a copy of a starting value): the kernel
// reads the init from the temporary, which stays with its copy; the
// epilogue (the scaling) is applied as each result is stored into %o.
// CHECK-LABEL: func.func @mean_copied_init
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<64xf32>
// CHECK: memref.copy %arg1, %[[TMP]]
// CHECK: gpu.launch
// CHECK: memref.load %[[TMP]]
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %arg2
// CHECK-NOT: linalg.generic
#rows = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0) -> (d0)>
func.func @mean_copied_init(%x: memref<128x64xf32>, %start: memref<64xf32>, %o: memref<64xf32>) {
  %n = arith.constant 128.0 : f32
  %tmp = memref.alloc() : memref<64xf32>
  memref.copy %start, %tmp : memref<64xf32> to memref<64xf32>
  linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
    ins(%x : memref<128x64xf32>) outs(%tmp : memref<64xf32>)
    attrs = {ke.colreduce = {threads_x = 32 : i64, threads_y = 8 : i64, unroll = 4 : i64}} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
    ins(%tmp : memref<64xf32>) outs(%o : memref<64xf32>)
    attrs = {ke.colreduce.epilogue} {
  ^bb0(%a: f32, %b: f32):
    %m = arith.divf %a, %n : f32
    linalg.yield %m : f32
  }
  return
}

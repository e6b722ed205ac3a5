// RUN: ke-opt %s --split-input-file --verify-diagnostics --ke-gpu-row-argmax --canonicalize --cse | FileCheck %s

// torch.argmax's body (a maximumf, the position where the input is
// greater) over rows of 197 on 32 threads per row, 8 rows per block. The
// fills are folded in (the scan starts from -inf; -1 stands for the
// init's index); each thread scans columns 32 k + lane for k < 7 (past 197
// skipped) keeping its first best and whether it saw a NaN; the row's
// threads combine by xor shuffles (the better value, ties to the smaller
// position); the row's first thread stores, scanning the row again with
// the body where it holds a NaN.
// CHECK-LABEL: func.func @torch_argmax
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c38, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: scf.for %{{.*}} = %c0 to %c7 step %c1 iter_args(%{{.*}} = %cst, %{{.*}} = %c-1_i32, %{{.*}} = %false) -> (f32, i32, i1)
// CHECK: arith.cmpi ult, %{{.*}}, %c197
// CHECK: vector.load %{{.*}} : memref<300x197xf32>, vector<1xf32>
// CHECK: arith.cmpf uno
// CHECK: arith.cmpf ogt
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : i32
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpi slt
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: scf.if
// CHECK: scf.if %{{.*}} -> (f32, i64) {
// CHECK: scf.for %{{.*}} = %c0 to %c197 step %c1 iter_args
// CHECK: arith.maximumf
// CHECK: } else {
// CHECK: arith.cmpi sge, %{{.*}}, %c0_i32 : i32
// CHECK: arith.extsi %{{.*}} : i32 to i64
// CHECK: memref.store %{{.*}} : memref<300xf32>
// CHECK: memref.store %{{.*}} : memref<300xi64>
// CHECK-NOT: linalg.generic
func.func @torch_argmax(%x: memref<300x197xf32>, %v: memref<300xf32>, %i: memref<300xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i64
  linalg.fill ins(%ninf : f32) outs(%v : memref<300xf32>)
  linalg.fill ins(%zero : i64) outs(%i : memref<300xi64>)
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<300x197xf32>) outs(%v, %i : memref<300xf32>, memref<300xi64>)
      attrs = {ke.argrow = {row_threads = 32 : i64, rows = 8 : i64, vec = 1 : i64, warp = 32 : i64}} {
    ^bb0(%in: f32, %best: f32, %idx: i64):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i64
      %m = arith.maximumf %in, %best : f32
      %gt = arith.cmpf ogt, %in, %best : f32
      %ni = arith.select %gt, %ji, %idx : i64
      linalg.yield %m, %ni : f32, i64
  }
  return
}

// -----

// An argmin of bf16 rows of 4096 (comparison written best-first) on 128
// threads per row: values compared in f32, each warp's result through
// shared memory; inits read from memory (no fills).
// CHECK-LABEL: func.func @bf16_argmin
// CHECK: memref.load %{{.*}} : memref<8xbf16>
// CHECK: memref.load %{{.*}} : memref<8xi32>
// CHECK: vector.load %{{.*}} : memref<8x4096xbf16>, vector<8xbf16>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.cmpf olt
// CHECK: memref.alloc() : memref<1x4xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @bf16_argmin(%x: memref<8x4096xbf16>, %v: memref<8xbf16>, %i: memref<8xi32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x4096xbf16>) outs(%v, %i : memref<8xbf16>, memref<8xi32>)
      attrs = {ke.argrow = {row_threads = 128 : i64, rows = 1 : i64, vec = 8 : i64, warp = 32 : i64}} {
    ^bb0(%in: bf16, %best: bf16, %idx: i32):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i32
      %lt = arith.cmpf ogt, %best, %in : bf16
      %nb = arith.select %lt, %in, %best : bf16
      %ni = arith.select %lt, %ji, %idx : i32
      linalg.yield %nb, %ni : bf16, i32
  }
  return
}

// -----

func.func @not_an_argmax(%x: memref<8x100xf32>, %v: memref<8xf32>, %i: memref<8xi32>) {
  // expected-error @below {{ke.argrow: expects an argmax or argmin over the innermost loop}}
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xf32>) outs(%v, %i : memref<8xf32>, memref<8xi32>)
      attrs = {ke.argrow = {row_threads = 32 : i64, rows = 8 : i64, vec = 4 : i64, warp = 32 : i64}} {
    ^bb0(%in: f32, %best: f32, %idx: i32):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i32
      %ge = arith.cmpf oge, %in, %best : f32
      %nb = arith.select %ge, %in, %best : f32
      %ni = arith.select %ge, %ji, %idx : i32
      linalg.yield %nb, %ni : f32, i32
  }
  return
}

// -----

func.func @missing_knob(%x: memref<8x100xf32>, %v: memref<8xf32>, %i: memref<8xi32>) {
  // expected-error @below {{ke.argrow: missing integer 'vec'}}
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xf32>) outs(%v, %i : memref<8xf32>, memref<8xi32>)
      attrs = {ke.argrow = {row_threads = 32 : i64, rows = 8 : i64, warp = 32 : i64}} {
    ^bb0(%in: f32, %best: f32, %idx: i32):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i32
      %gt = arith.cmpf ogt, %in, %best : f32
      %nb = arith.select %gt, %in, %best : f32
      %ni = arith.select %gt, %ji, %idx : i32
      linalg.yield %nb, %ni : f32, i32
  }
  return
}

// -----

func.func @f64_values(%x: memref<8x100xf64>, %v: memref<8xf64>, %i: memref<8xi32>) {
  // expected-error @below {{ke.argrow: expects values of at most 32 bits}}
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xf64>) outs(%v, %i : memref<8xf64>, memref<8xi32>)
      attrs = {ke.argrow = {row_threads = 32 : i64, rows = 8 : i64, vec = 1 : i64, warp = 32 : i64}} {
    ^bb0(%in: f64, %best: f64, %idx: i32):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i32
      %gt = arith.cmpf ogt, %in, %best : f64
      %nb = arith.select %gt, %in, %best : f64
      %ni = arith.select %gt, %ji, %idx : i32
      linalg.yield %nb, %ni : f64, i32
  }
  return
}

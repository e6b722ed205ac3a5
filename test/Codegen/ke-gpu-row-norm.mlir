// RUN: ke-opt %s --split-input-file --verify-diagnostics --ke-gpu-row-norm --canonicalize --cse | FileCheck %s

// A layer norm over rows of 100 (a mean, then a variance reading it) with
// a weight per column, on 4 threads per row and 64 rows per block: each
// reduction's body runs over the thread's vectors of 4 (past 100 skipped)
// from 0 (addf's neutral element), the row's threads combine their
// partials by shuffles and the fill's value is added once; the anchor
// reads the row, both results as values and the weight by column, and
// stores vectors.
// CHECK-LABEL: func.func @layernorm
// CHECK-NOT: linalg.
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256,
// CHECK: scf.for %{{.*}} = %c0 to %c7 step %c1 iter_args(%{{.*}} = %cst{{.*}}) -> (f32)
// CHECK: arith.cmpi ult, %{{.*}}, %c100
// CHECK: vector.load %{{.*}} : memref<128x100xf32>, vector<4xf32>
// CHECK-COUNT-4: arith.addf
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: arith.addf %{{.*}}, %cst : f32
// CHECK: scf.for
// CHECK: arith.subf %{{.*}}, %{{.*}} : f32
// CHECK: gpu.shuffle
// CHECK: scf.for
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<100xf32>
// CHECK: math.rsqrt
// CHECK: vector.from_elements
// CHECK: vector.store %{{.*}} : memref<128x100xf32>, vector<4xf32>
func.func @layernorm(%x: memref<128x100xf32>, %g: memref<100xf32>, %y: memref<128x100xf32>) {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.01 : f32
  %eps = arith.constant 1.0e-5 : f32
  %sm = memref.alloc() : memref<128xf32>
  %sv = memref.alloc() : memref<128xf32>
  linalg.fill ins(%zero : f32) outs(%sm : memref<128xf32>)
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<128x100xf32>) outs(%sm : memref<128xf32>) attrs = {ke.row_reduction} {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%sv : memref<128xf32>)
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %sm : memref<128x100xf32>, memref<128xf32>) outs(%sv : memref<128xf32>) attrs = {ke.row_reduction} {
    ^bb0(%v: f32, %p: f32, %acc: f32):
      %mu = arith.mulf %p, %inv : f32
      %d = arith.subf %v, %mu : f32
      %q = arith.mulf %d, %d : f32
      %s = arith.addf %q, %acc : f32
      linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sm, %sv, %g : memref<128x100xf32>, memref<128xf32>, memref<128xf32>, memref<100xf32>) outs(%y : memref<128x100xf32>)
      attrs = {ke.rownorm = {row_threads = 4 : i64, rows = 64 : i64, vec = 4 : i64, warp = 32 : i64}} {
    ^bb0(%v: f32, %r0: f32, %r1: f32, %c0: f32, %o: f32):
      %mu = arith.mulf %r0, %inv : f32
      %var = arith.mulf %r1, %inv : f32
      %ve = arith.addf %var, %eps : f32
      %rs = math.rsqrt %ve : f32
      %d = arith.subf %v, %mu : f32
      %n = arith.mulf %d, %rs : f32
      %w = arith.mulf %n, %c0 : f32
      linalg.yield %w : f32
  }
  return
}

// -----

func.func @no_reductions(%x: memref<8x100xf32>, %y: memref<8x100xf32>) {
  // expected-error @below {{ke.rownorm: expects the row reductions the op reads}}
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x100xf32>) outs(%y : memref<8x100xf32>)
      attrs = {ke.rownorm = {row_threads = 32 : i64, rows = 1 : i64, vec = 4 : i64, warp = 32 : i64}} {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
  }
  return
}

// -----

func.func @no_combiner(%x: memref<8x100xf32>, %y: memref<8x100xf32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %s = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<8xf32>)
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xf32>) outs(%s : memref<8xf32>) attrs = {ke.row_reduction} {
    ^bb0(%v: f32, %acc: f32):
      %a = arith.addf %v, %acc : f32
      %t = arith.mulf %a, %two : f32
      linalg.yield %t : f32
  }
  // expected-error @below {{ke.rownorm: expects row reductions over the anchor's rows with a float combiner}}
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<8x100xf32>, memref<8xf32>) outs(%y : memref<8x100xf32>)
      attrs = {ke.rownorm = {row_threads = 32 : i64, rows = 1 : i64, vec = 4 : i64, warp = 32 : i64}} {
    ^bb0(%v: f32, %r: f32, %o: f32):
      %d = arith.subf %v, %r : f32
      linalg.yield %d : f32
  }
  return
}

// -----

func.func @f16_rows(%x: memref<8x100xf16>, %y: memref<8x100xf16>) {
  %zero = arith.constant 0.0 : f16
  %s = memref.alloc() : memref<8xf16>
  linalg.fill ins(%zero : f16) outs(%s : memref<8xf16>)
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xf16>) outs(%s : memref<8xf16>) attrs = {ke.row_reduction} {
    ^bb0(%v: f16, %acc: f16):
      %a = arith.addf %v, %acc : f16
      linalg.yield %a : f16
  }
  // expected-error @below {{ke.rownorm: expects static, contiguous f32 operands read through projected permutations}}
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<8x100xf16>, memref<8xf16>) outs(%y : memref<8x100xf16>)
      attrs = {ke.rownorm = {row_threads = 32 : i64, rows = 1 : i64, vec = 4 : i64, warp = 32 : i64}} {
    ^bb0(%v: f16, %r: f16, %o: f16):
      %d = arith.subf %v, %r : f16
      linalg.yield %d : f16
  }
  return
}

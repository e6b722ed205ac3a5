// RUN: ke-opt %s --ke-gpu-reference-launches --canonicalize --cse --split-input-file --verify-diagnostics | FileCheck %s

// A matmul: one thread per output element (64 points in one block), the
// last parallel loop fastest; the reduction runs in the thread with the
// output carried in a register in f64, loaded once and stored once,
// rounded to f32.
// CHECK-LABEL: func.func @kernel
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C64]],
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[TX]], %[[C64]]
// CHECK: scf.if %[[IN]]
// CHECK: %[[J:.*]] = arith.remui %[[TX]], %[[C16]]
// CHECK: %[[I:.*]] = arith.divui %[[TX]], %[[C16]]
// CHECK: %[[INIT:.*]] = memref.load %arg2[%[[I]], %[[J]]]
// CHECK: %[[WIDE:.*]] = arith.extf %[[INIT]] : f32 to f64
// CHECK: %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[C8]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[WIDE]]) -> (f64)
// CHECK: memref.load %arg0[%[[I]], %[[K]]]
// CHECK: arith.extf
// CHECK: memref.load %arg1[%[[K]], %[[J]]]
// CHECK: arith.extf
// CHECK: arith.mulf {{.*}} : f64
// CHECK: %[[NEXT:.*]] = arith.addf %[[ACC]], {{.*}} : f64
// CHECK: scf.yield %[[NEXT]]
// CHECK: %[[ROUNDED:.*]] = arith.truncf %[[SUM]] : f64 to f32
// CHECK: memref.store %[[ROUNDED]], %arg2[%[[I]], %[[J]]]
func.func @kernel(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// A reduction over a middle loop: the parallel loops still give the
// threads (4 x 16), linalg.index reads the thread's index, and a fill with
// a scalar operand and a memref.copy get launches of their own, in order.
// CHECK-LABEL: func.func @kernel
// CHECK: gpu.launch
// CHECK: memref.store %cst, %arg1
// CHECK: gpu.launch
// CHECK: %[[J:.*]] = arith.remui
// CHECK: scf.for %[[R:.*]] = {{.*}} iter_args
// CHECK: memref.load %arg0[%{{.*}}, %[[R]], %[[J]]]
// CHECK: arith.index_cast %[[J]]
// CHECK: gpu.launch
// CHECK: %[[V:.*]] = memref.load %arg1
// CHECK: memref.store %[[V]], %arg2
// CHECK-NOT: linalg.
// CHECK-NOT: memref.copy
#m0 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#m1 = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @kernel(%x: memref<4x8x16xf32>, %s: memref<4x16xf32>, %t: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#m0, #m1], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : memref<4x8x16xf32>) outs(%s : memref<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 2 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %sum = arith.addf %in, %out : f32
    %r = arith.addf %sum, %f : f32
    linalg.yield %r : f32
  }
  memref.copy %s, %t : memref<4x16xf32> to memref<4x16xf32>
  return
}

// -----

// The accurate path keeps the body's own roundings and functions: a bf16
// sum of exp(x) whose body rounds to bf16 computes exp in f32 and rounds
// each step to bf16, as written; only the f32 arithmetic runs in f64.
// CHECK-LABEL: func.func @kernel
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f64)
// CHECK: %[[X:.*]] = memref.load %arg0
// CHECK: %[[X32:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: %[[E:.*]] = math.exp %[[X32]] : f32
// CHECK: %[[E64:.*]] = arith.extf %[[E]] : f32 to f64
// CHECK: arith.truncf %[[ACC]] : f64 to bf16
// CHECK: %[[S:.*]] = arith.addf %[[E64]], %{{.*}} : f64
// CHECK: %[[S32:.*]] = arith.truncf %[[S]] : f64 to f32
// CHECK: %[[R:.*]] = arith.truncf %[[S32]] : f32 to bf16
// CHECK: %[[R64:.*]] = arith.extf %[[R]] : bf16 to f64
// CHECK: scf.yield %[[R64]]
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @kernel(%x: memref<4x32xbf16>, %s: memref<4xbf16>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x32xbf16>) outs(%s : memref<4xbf16>) {
  ^bb0(%in: bf16, %acc: bf16):
    %a = arith.extf %in : bf16 to f32
    %e = math.exp %a : f32
    %b = arith.extf %acc : bf16 to f32
    %t = arith.addf %e, %b : f32
    %r = arith.truncf %t : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}

// -----

// An input that reads the output's buffer: each reduction step loads and
// stores the output, as plain loops would, instead of carrying it.
// CHECK-LABEL: func.func @kernel
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: memref.load %arg0
// CHECK: memref.load %arg0
// CHECK: memref.store
// CHECK: }
#a = affine_map<(d0, d1) -> (d1, d0)>
#o = affine_map<(d0, d1) -> (d0, 0)>
func.func @kernel(%x: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [#a, #o], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x8xf32>) outs(%x : memref<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Big elementwise ops get blocks of 256 threads and a grid that covers
// every point: 1000 points, 4 blocks, the last one guarded.
// CHECK-LABEL: func.func @kernel
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C1000:.*]] = arith.constant 1000 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C4]], {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]],
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %[[C256]]
// CHECK: %[[P:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: arith.cmpi ult, %[[P]], %[[C1000]]
// CHECK: math.exp
func.func @kernel(%x: memref<1000xf32>, %y: memref<1000xf32>) {
  linalg.exp ins(%x : memref<1000xf32>) outs(%y : memref<1000xf32>)
  return
}

// -----

func.func @kernel(%x: memref<?xf32>, %y: memref<?xf32>) {
  // expected-error @below {{the device reference needs static loop ranges}}
  linalg.exp ins(%x : memref<?xf32>) outs(%y : memref<?xf32>)
  return
}

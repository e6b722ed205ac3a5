// RUN: ke-opt %s --ke-widen-reference-floats | FileCheck %s

// A bf16 row sum: the accumulator is f64 (the fill, an op of its own,
// computed in f64 and rounded to bf16, then extended for the sum), each
// element extended, the sum rounded to bf16 once at the end (through f32:
// the CPU JIT has no f64 -> bf16 conversion).
// CHECK-LABEL: func.func @sum_bf16
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : bf16) outs(%{{.*}} : tensor<8xf64>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8xbf16>) outs(%{{.*}} : tensor<8xf64>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<8x1285xbf16>) outs(%[[INIT]] : tensor<8xf64>)
// CHECK: ^bb0(%[[A:.*]]: bf16, %[[ACC:.*]]: f64):
// CHECK: %[[A32:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK: %[[A64:.*]] = arith.extf %[[A32]] : f32 to f64
// CHECK: %[[S:.*]] = arith.addf %[[A64]], %[[ACC]] : f64
// CHECK: linalg.yield %[[S]] : f64
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<8xf64>) outs(%{{.*}} : tensor<8xbf16>)
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @sum_bf16(%x: tensor<8x1285xbf16>) -> tensor<8xbf16> {
  %z = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<8xbf16>
  %f = linalg.fill ins(%z : bf16) outs(%e : tensor<8xbf16>) -> tensor<8xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
    ins(%x : tensor<8x1285xbf16>) outs(%f : tensor<8xbf16>) {
  ^bb0(%a: bf16, %acc: bf16):
    %s = arith.addf %a, %acc : bf16
    linalg.yield %s : bf16
  } -> tensor<8xbf16>
  return %r : tensor<8xbf16>
}

// A named matmul is generalized and accumulates in f64; an elementwise
// consumer's math function stays in f32 (as written), its multiplication
// and constant go to f64; its init, never read, is a fresh f64 tensor.
// CHECK-LABEL: func.func @matmul_exp
// CHECK: %[[MM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK: arith.addf %{{.*}}, %{{.*}} : f64
// CHECK: %[[MM32:.*]] = linalg.generic {{.*}} ins(%[[MM]] : tensor<4x4xf64>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<4x4xf64>
// CHECK: linalg.generic {{.*}} ins(%[[MM32]] : tensor<4x4xf32>) outs(%[[EMPTY]] : tensor<4x4xf64>)
// CHECK: %[[EXP:.*]] = math.exp %{{.*}} : f32
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f64
// CHECK: %[[EXP64:.*]] = arith.extf %[[EXP]] : f32 to f64
// CHECK: arith.mulf %[[EXP64]], %[[HALF]] : f64
// CHECK-NOT: linalg.matmul
func.func @matmul_exp(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%m : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    %h = arith.constant 0.5 : f32
    %u = arith.mulf %t, %h : f32
    linalg.yield %u : f32
  } -> tensor<4x4xf32>
  return %g : tensor<4x4xf32>
}

// Integers and f64 are left as they are.
// CHECK-LABEL: func.func @ints
// CHECK: arith.addi %{{.*}}, %{{.*}} : i32
// CHECK-NOT: f64
func.func @ints(%a: tensor<4xi32>) -> tensor<4xi32> {
  %e = tensor.empty() : tensor<4xi32>
  %g = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
    ins(%a : tensor<4xi32>) outs(%e : tensor<4xi32>) {
  ^bb0(%v: i32, %o: i32):
    %u = arith.addi %v, %v : i32
    linalg.yield %u : i32
  } -> tensor<4xi32>
  return %g : tensor<4xi32>
}

// RUN: ke-opt %s --ke-demote-f64 | FileCheck %s
// RUN: ke-opt %s --ke-prepare-graph | FileCheck %s --check-prefix=PREPARED
// RUN: ke-opt %s --ke-prepare-graph=demote-f64=false | FileCheck %s --check-prefix=KEPT
// RUN: ke-opt workloads --demote-f64=false %s | FileCheck %s --check-prefix=KEPT-WORKLOADS

#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A norm's variance as torch-mlir computes it: the f32 input extended to
// f64, the mean of squares in f64, truncated back. All of it becomes f32:
// no f64 type and no extf or truncf is left.
// CHECK-LABEL: func.func @variance
// CHECK-NOT: f64
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<64xf32>)
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: arith.constant 2.560000e+02 : f32
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: f64
// CHECK: return %{{.*}} : tensor<64xf32>

// The whole preparation also fuses the division into its reader.
// PREPARED-LABEL: func.func @variance
// PREPARED-NOT: f64
// PREPARED-LABEL: func.func @f64_argument

// KEPT-LABEL: func.func @variance
// KEPT: arith.extf %{{.*}} : f32 to f64
// KEPT: arith.truncf %{{.*}} : f64 to f32
// KEPT-WORKLOADS: "kind":"reduction",{{.*}}"element_types":["f32","f64"]
func.func @variance(%x: tensor<64x256xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.000000e+00 : f64
  %n = arith.constant 2.560000e+02 : f64
  %e = tensor.empty() : tensor<64xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<64xf64>) -> tensor<64xf64>
  %sum = linalg.generic {indexing_maps = [#map, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x256xf32>) outs(%f : tensor<64xf64>) {
  ^bb0(%in: f32, %out: f64):
    %w = arith.extf %in : f32 to f64
    %sq = arith.mulf %w, %w : f64
    %s = arith.addf %sq, %out : f64
    linalg.yield %s : f64
  } -> tensor<64xf64>
  %e32 = tensor.empty() : tensor<64xf32>
  %var = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%sum : tensor<64xf64>) outs(%e32 : tensor<64xf32>) {
  ^bb0(%in: f64, %out: f32):
    %d = arith.divf %in, %n : f64
    %t = arith.truncf %d : f64 to f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  return %var : tensor<64xf32>
}

// f64 data that is not derived from f32 (an f64 argument) stays f64, and so
// does an f64 result the function returns.
// CHECK-LABEL: func.func @f64_argument
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK-LABEL: func.func @f64_returned
// CHECK: arith.extf
// CHECK: -> tensor<64xf64>
func.func @f64_argument(%x: tensor<64xf64>) -> tensor<64xf64> {
  %e = tensor.empty() : tensor<64xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<64xf64>) outs(%e : tensor<64xf64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.mulf %in, %in : f64
    linalg.yield %m : f64
  } -> tensor<64xf64>
  return %r : tensor<64xf64>
}
func.func @f64_returned(%x: tensor<64xf32>) -> tensor<64xf64> {
  %e = tensor.empty() : tensor<64xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf64>) {
  ^bb0(%in: f32, %out: f64):
    %w = arith.extf %in : f32 to f64
    linalg.yield %w : f64
  } -> tensor<64xf64>
  return %r : tensor<64xf64>
}

// Reshapes of derived f64 tensors are retyped with them: GroupNorm and
// InstanceNorm reduce rows collapsed from their f64 copy of the input (by
// ke-fold-reduction-unit-dims or ke-collapse-reduction-dims), which kept
// all their f64 before.
// CHECK-LABEL: func.func @reshaped_rows
// CHECK-NOT: f64
// CHECK: tensor.collapse_shape %{{.*}} : tensor<6x4x8xf32> into tensor<6x32xf32>
// CHECK-NOT: f64
// CHECK: tensor.expand_shape %{{.*}} : tensor<6xf32> into tensor<6x1xf32>
// CHECK-NOT: f64
// CHECK: return
// PREPARED-LABEL: func.func @reshaped_rows
// PREPARED-NOT: f64
// PREPARED: return
func.func @reshaped_rows(%x: tensor<6x4x8xf32>) -> tensor<6x1xf32> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<6x4x8xf64>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<6x4x8xf32>) outs(%e : tensor<6x4x8xf64>) {
  ^bb0(%in: f32, %out: f64):
    %d = arith.extf %in : f32 to f64
    linalg.yield %d : f64
  } -> tensor<6x4x8xf64>
  %rows = tensor.collapse_shape %w [[0], [1, 2]] : tensor<6x4x8xf64> into tensor<6x32xf64>
  %se = tensor.empty() : tensor<6xf64>
  %f = linalg.fill ins(%zero : f64) outs(%se : tensor<6xf64>) -> tensor<6xf64>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%rows : tensor<6x32xf64>) outs(%f : tensor<6xf64>) {
  ^bb0(%in: f64, %out: f64):
    %a = arith.addf %in, %out : f64
    linalg.yield %a : f64
  } -> tensor<6xf64>
  %kept = tensor.expand_shape %s [[0, 1]] output_shape [6, 1] : tensor<6xf64> into tensor<6x1xf64>
  %oe = tensor.empty() : tensor<6x1xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%kept : tensor<6x1xf64>) outs(%oe : tensor<6x1xf32>) {
  ^bb0(%in: f64, %out: f32):
    %t = arith.truncf %in : f64 to f32
    linalg.yield %t : f32
  } -> tensor<6x1xf32>
  return %r : tensor<6x1xf32>
}

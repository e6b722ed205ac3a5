// RUN: ke-opt %s --ke-compute-narrow-floats-in-f32 --split-input-file | FileCheck %s

// torch-mlir's bf16 sigmoid: four bf16 steps, each rounded. In f32 it is
// rounded once, at the yield; the captured constant is extended inside the
// body (kernels clone constants, they take no other scalars).
// CHECK-LABEL: func.func @sigmoid
// CHECK: linalg.generic
// CHECK: ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-DAG: %[[ONE:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK-DAG: %[[X:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK: %[[N:.*]] = arith.negf %[[X]] : f32
// CHECK: %[[E:.*]] = math.exp %[[N]] : f32
// CHECK: %[[A:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK: %[[D:.*]] = arith.divf %[[ONE]], %[[A]] : f32
// CHECK: %[[R:.*]] = arith.truncf %[[D]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16
#map = affine_map<(d0) -> (d0)>
func.func @sigmoid(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  %one = arith.constant 1.0 : bf16
  %e = tensor.empty() : tensor<8xbf16>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xbf16>) outs(%e : tensor<8xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %n = arith.negf %in : bf16
    %ex = math.exp %n : bf16
    %a = arith.addf %ex, %one : bf16
    %d = arith.divf %one, %a : bf16
    linalg.yield %d : bf16
  } -> tensor<8xbf16>
  return %r : tensor<8xbf16>
}

// -----

// f16 too; an explicit truncf is a rounding the model asks for and stays:
// the product is rounded to f16 before the compare and the select, which
// then run in f32 on the rounded value.
// CHECK-LABEL: func.func @explicit_rounding
// CHECK: %[[M:.*]] = arith.mulf {{.*}} : f32
// CHECK: %[[M16:.*]] = arith.truncf %[[M]] : f32 to f16
// CHECK: %[[Q:.*]] = arith.truncf %[[M16]] : f16 to f8E4M3FN
// CHECK: %[[BACK:.*]] = arith.extf %[[Q]] : f8E4M3FN to f16
// CHECK: %[[W:.*]] = arith.extf %[[BACK]] : f16 to f32
// CHECK: arith.cmpf ogt, %[[W]], %{{.*}} : f32
// CHECK: arith.select {{.*}} : f32
#map = affine_map<(d0) -> (d0)>
func.func @explicit_rounding(%x: tensor<8xf16>) -> tensor<8xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<8xf16>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf16>) outs(%e : tensor<8xf16>) {
  ^bb0(%in: f16, %out: f16):
    %m = arith.mulf %in, %in : f16
    %q = arith.truncf %m : f16 to f8E4M3FN
    %b = arith.extf %q : f8E4M3FN to f16
    %c = arith.cmpf ogt, %b, %zero : f16
    %s = arith.select %c, %b, %zero : f16
    linalg.yield %s : f16
  } -> tensor<8xf16>
  return %r : tensor<8xf16>
}

// -----

// f32 bodies, named ops and bodies with nothing narrow to compute are
// left as they are.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
#map = affine_map<(d0) -> (d0)>
func.func @untouched(%x: tensor<8xf32>, %y: tensor<8xbf16>) -> (tensor<8xf32>, tensor<8xbf16>) {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %in : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xbf16>
  %s = linalg.exp ins(%y : tensor<8xbf16>) outs(%e2 : tensor<8xbf16>) -> tensor<8xbf16>
  return %r, %s : tensor<8xf32>, tensor<8xbf16>
}

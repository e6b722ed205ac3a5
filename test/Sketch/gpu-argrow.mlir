// gpu.argrow: arg reductions over the innermost loop (the suite's select
// form, torch-mlir's maximumf form) are marked for ke-gpu-row-argmax
// before bufferization (test/Codegen/ke-gpu-row-argmax.mlir builds the
// kernel); f64 values are not.
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s

// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch gpu.argrow
// CHECK-NEXT: // knob row_threads: 1 2 4 8 16 32 64 128 256 512 [1024]
// CHECK-NEXT: // knob rows: [1] 2 4 8 16 32 64 128 256 512 1024
// CHECK-NEXT: // knob vec: [1]{{$}}
// CHECK: %[[K:.*]] = transform.param.constant {row_threads = 1024 : i64, rows = 1 : i64, vec = 1 : i64, warp = 32 : i64}
// CHECK: %[[A:.*]] = transform.structured.match ops{["linalg.generic"]} attributes {ke.anchor}
// CHECK: transform.annotate %[[A]] "ke.argrow" = %[[K]]
// CHECK: transform.bufferization.one_shot_bufferize
func.func @gpt2_argmax(%x: tensor<16x50257xf32>) -> tensor<16xi64> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i64
  %ev = tensor.empty() : tensor<16xf32>
  %ei = tensor.empty() : tensor<16xi64>
  %v = linalg.fill ins(%ninf : f32) outs(%ev : tensor<16xf32>) -> tensor<16xf32>
  %i = linalg.fill ins(%zero : i64) outs(%ei : tensor<16xi64>) -> tensor<16xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x50257xf32>) outs(%v, %i : tensor<16xf32>, tensor<16xi64>) {
    ^bb0(%in: f32, %best: f32, %idx: i64):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i64
      %m = arith.maximumf %in, %best : f32
      %gt = arith.cmpf ogt, %in, %best : f32
      %ni = arith.select %gt, %ji, %idx : i64
      linalg.yield %m, %ni : f32, i64
  } -> (tensor<16xf32>, tensor<16xi64>)
  return %r#1 : tensor<16xi64>
}

// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch gpu.argrow
// CHECK: {row_threads = 4 : i64, rows = 64 : i64, vec = 4 : i64, warp = 32 : i64}
func.func @suite_argmax(%x: tensor<64x96xf32>) -> tensor<64xi32> {
  %ninf = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0 : i32
  %ev = tensor.empty() : tensor<64xf32>
  %ei = tensor.empty() : tensor<64xi32>
  %v = linalg.fill ins(%ninf : f32) outs(%ev : tensor<64xf32>) -> tensor<64xf32>
  %i = linalg.fill ins(%zero : i32) outs(%ei : tensor<64xi32>) -> tensor<64xi32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x96xf32>) outs(%v, %i : tensor<64xf32>, tensor<64xi32>) {
    ^bb0(%in: f32, %best: f32, %idx: i32):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i32
      %gt = arith.cmpf ogt, %in, %best : f32
      %nb = arith.select %gt, %in, %best : f32
      %ni = arith.select %gt, %ji, %idx : i32
      linalg.yield %nb, %ni : f32, i32
  } -> (tensor<64xf32>, tensor<64xi32>)
  return %r#1 : tensor<64xi32>
}

// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NOT: gpu.argrow
// CHECK: // sketch gpu.elementwise
func.func @f64_argmax(%x: tensor<64x96xf64>) -> tensor<64xi32> {
  %ninf = arith.constant -1.0e+300 : f64
  %zero = arith.constant 0 : i32
  %ev = tensor.empty() : tensor<64xf64>
  %ei = tensor.empty() : tensor<64xi32>
  %v = linalg.fill ins(%ninf : f64) outs(%ev : tensor<64xf64>) -> tensor<64xf64>
  %i = linalg.fill ins(%zero : i32) outs(%ei : tensor<64xi32>) -> tensor<64xi32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x96xf64>) outs(%v, %i : tensor<64xf64>, tensor<64xi32>) {
    ^bb0(%in: f64, %best: f64, %idx: i32):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i32
      %gt = arith.cmpf ogt, %in, %best : f64
      %nb = arith.select %gt, %in, %best : f64
      %ni = arith.select %gt, %ji, %idx : i32
      linalg.yield %nb, %ni : f64, i32
  } -> (tensor<64xf64>, tensor<64xi32>)
  return %r#1 : tensor<64xi32>
}

// gpu.rownorm on rows that are not a multiple of 64 elements (GPT-2's
// vocabulary, 4097, 96): the reductions are fused into the elementwise op's
// kernel as for other rows, and the script marks the anchor for
// ke-gpu-row-norm (test/Codegen/ke-gpu-row-norm.mlir), with the row
// kernels' knobs (GpuRowKernel.h).
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s

// CHECK: workload {{[0-9a-f]+}} linalg.fill
// CHECK-NEXT: // fused into workload [[ANCHOR:[0-9a-f]+]]
// CHECK: workload {{[0-9a-f]+}} linalg.generic
// CHECK-NEXT: // fused into workload [[ANCHOR]]
// CHECK: workload [[ANCHOR]] linalg.generic
// CHECK-NEXT: // sketch gpu.rownorm
// CHECK-NEXT: // knob row_threads: 1 2 [4] 8 16 32 64 128
// CHECK-NEXT: // knob rows: 1 2 4 8 16 32 [64] 128 256 512 1024
// CHECK-NEXT: // knob vec: 1 2 [4]{{$}}
// CHECK: %[[K:.*]] = transform.param.constant {row_threads = 4 : i64, rows = 64 : i64, vec = 4 : i64, warp = 32 : i64}
// CHECK: %[[A:.*]] = transform.structured.match ops{["linalg.generic"]} attributes {ke.anchor}
// CHECK: transform.annotate %[[A]] "ke.rownorm" = %[[K]]
// CHECK: transform.bufferization.one_shot_bufferize
func.func @rows_of_100(%x: tensor<16x100xf32>) -> tensor<16x100xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x100xf32>
  %er = tensor.empty() : tensor<16xf32>
  %ssi = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x100xf32>) outs(%ssi : tensor<16xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %q = arith.mulf %v, %v : f32
      %s = arith.addf %q, %acc : f32
      linalg.yield %s : f32
  } -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss : tensor<16x100xf32>, tensor<16xf32>) outs(%e : tensor<16x100xf32>) {
    ^bb0(%v: f32, %r0: f32, %o: f32):
      %y = arith.divf %v, %r0 : f32
      linalg.yield %y : f32
  } -> tensor<16x100xf32>
  return %r : tensor<16x100xf32>
}

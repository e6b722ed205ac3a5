// gpu.softmax, rows no warp multiple divides, and 16-bit rows: the
// softmax is bufferized and marked for ke-gpu-row-softmax
// (test/Codegen/ke-gpu-row-softmax.mlir), which builds the kernel. The
// defaults: the widest vector dividing the row in 128 bits, the fewest
// threads per row leaving each at most 8 vectors, 256 threads per block
// (four of ROCm's 64-lane waves, whose shuffles stay within a row's lanes).
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.softmax | FileCheck %s
// RUN: ke-opt sketches %s --target rocm:gfx942 --sketch gpu.softmax | FileCheck %s --check-prefix=ROCM
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.softmax --knobs row_threads=64,rows=2,vec=2 | FileCheck %s --check-prefix=KNOBS

// 1000 = 8 x 125: vectors of 4, 32 threads per row (8 vectors each).
// CHECK-LABEL: // -----// workload {{.*}} linalg.softmax
// CHECK-NEXT: // sketch gpu.softmax
// CHECK-NEXT: // knob row_threads: 1 2 4 8 16 [32] 64 128 256 512 1024
// CHECK-NEXT: // knob rows: 1 2 4 [8] 16 32 64 128 256 512 1024
// CHECK-NEXT: // knob vec: 1 2 [4]
// CHECK: %[[K:.*]] = transform.param.constant {row_threads = 32 : i64, rows = 8 : i64, vec = 4 : i64, warp = 32 : i64}
// CHECK: %[[F:.*]] = transform.bufferization.one_shot_bufferize
// CHECK: %[[S:.*]] = transform.structured.match ops{["linalg.softmax"]} in %[[F]]
// CHECK: transform.annotate %[[S]] "ke.softmax" = %[[K]]
// ROCM: transform.param.constant {row_threads = 32 : i64, rows = 8 : i64, vec = 4 : i64, warp = 64 : i64}
// KNOBS: {row_threads = 64 : i64, rows = 2 : i64, vec = 2 : i64, warp = 32 : i64}
func.func @rows_of_1000(%x: tensor<64x1000xf32>) -> tensor<64x1000xf32> {
  %e = tensor.empty() : tensor<64x1000xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<64x1000xf32>) outs(%e : tensor<64x1000xf32>) -> tensor<64x1000xf32>
  return %r : tensor<64x1000xf32>
}

// f16 rows of 4096 (a warp multiple): computed in f32 by the row kernel,
// vectors of 8 (128 bits), 64 threads per row.
// CHECK-LABEL: // -----// workload {{.*}} linalg.softmax
// CHECK: // knob vec: 1 2 4 [8]
// CHECK: transform.param.constant {row_threads = 64 : i64, rows = 4 : i64, vec = 8 : i64, warp = 32 : i64}
func.func @f16_rows(%x: tensor<16x4096xf16>) -> tensor<16x4096xf16> {
  %e = tensor.empty() : tensor<16x4096xf16>
  %r = linalg.softmax dimension(1) ins(%x : tensor<16x4096xf16>) outs(%e : tensor<16x4096xf16>) -> tensor<16x4096xf16>
  return %r : tensor<16x4096xf16>
}

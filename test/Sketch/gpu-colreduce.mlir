// gpu.colreduce takes reductions whose one reduction loop is not the
// innermost (BatchNorm's statistics over the batch, torch.sum over a
// middle dimension), with the fill of their init and an elementwise
// consumer of their result (a mean's scaling) in their kernel, on every GPU
// target. Its script only marks the op (and the consumer, as the epilogue)
// for ke-gpu-column-reduce. It is the default where the reduction loop
// holds a warp's worth of rows: a block of 32 columns, enough threads along
// the rows that the grid holds about 1024 threads per multiprocessor.
// Shorter reductions keep gpu.elementwise's default (one thread per
// column), gpu.colreduce a candidate.
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s
// RUN: ke-opt sketches %s --target rocm:gfx942 | FileCheck %s --check-prefix=ROCM
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT
// The kernel is plain GPU dialect (workgroup memory and a barrier): it
// builds for ROCm too, its partial results in 16 x 64 x 4 bytes of LDS.
// RUN: ke-opt compile %s --target rocm:gfx942 --emit=asm -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROCM-DEFAULT

#rows = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0) -> (d0)>

// 4096 columns of 16384 rows on 132 SMs: 128 blocks of 32 columns, 32
// threads each along the rows.
// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch gpu.colreduce
// CHECK-NEXT: // knob threads.x: [32] 64 128 256
// CHECK-NEXT: // knob threads.y: 1 2 4 8 16 [32]
// CHECK-NEXT: // knob unroll: 1 2 [4] 8
// CHECK: {threads_x = 32 : i64, threads_y = 32 : i64, unroll = 4 : i64}
// CHECK: transform.annotate {{.*}} "ke.colreduce" = %{{.*}}
// CHECK-NOT: ke.colreduce.epilogue
// CHECK: // sketch gpu.elementwise
// DEFAULT: linalg.generic (gpu.colreduce)
// On ROCm a block of 64 columns (a wavefront), 16 threads along the rows
// (1024 threads).
// ROCM: // sketch gpu.colreduce
// ROCM-NEXT: // knob threads.x: [64] 128 256 512
// ROCM-NEXT: // knob threads.y: 1 2 4 8 [16] 32
// ROCM-DEFAULT: linalg.generic (gpu.colreduce)
// ROCM-DEFAULT-NEXT: 4096 bytes LDS
func.func @batch_sum(%x: tensor<16384x4096xf32>) -> tensor<4096xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4096xf32>) -> tensor<4096xf32>
  %s = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<16384x4096xf32>) outs(%f : tensor<4096xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4096xf32>
  return %s : tensor<4096xf32>
}

// A mean: the scaling is the kernel's epilogue.
// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch gpu.colreduce
// CHECK: transform.annotate {{.*}} "ke.colreduce" = %{{.*}}
// CHECK: transform.annotate {{.*}} "ke.colreduce.epilogue"
// DEFAULT: linalg.generic (gpu.colreduce)
func.func @batch_mean(%x: tensor<1024x512xf32>) -> tensor<512xf32> {
  %z = arith.constant 0.0 : f32
  %n = arith.constant 1024.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %s = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<1024x512xf32>) outs(%f : tensor<512xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<512xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%s : tensor<512xf32>) outs(%e : tensor<512xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.divf %a, %n : f32
    linalg.yield %t : f32
  } -> tensor<512xf32>
  return %m : tensor<512xf32>
}

// 16 rows: gpu.elementwise stays the default.
// CHECK: // fused into workload
// CHECK-NEXT: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch gpu.colreduce
// CHECK-NEXT: // knob threads.x: [32] 64 128 256
// CHECK-NEXT: // knob threads.y: 1 2 4 8 [16]
// CHECK: // sketch gpu.elementwise
// DEFAULT: linalg.generic (gpu.elementwise)
func.func @short_columns(%x: tensor<16x4096xf32>) -> tensor<4096xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4096xf32>) -> tensor<4096xf32>
  %s = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<16x4096xf32>) outs(%f : tensor<4096xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.maximumf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4096xf32>
  return %s : tensor<4096xf32>
}

// An elementwise chain (the relu chain of the suite) on sm_90: each thread
// loads and stores one 128-bit vector; kernel buffers are 16-byte aligned
// and the thread tiles are vector-wide along the contiguous dimension, so no
// access is split into scalars.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s --check-prefix=SCALAR
// SCALAR-NOT: {{(ld|st)}}.global.b32

// CHECK-LABEL: .visible .entry kernel_kernel(
// CHECK: .param .u64 .ptr .align 16
// CHECK: ld.global{{(.nc)?}}.v4.b32
// CHECK: max.NaN.f32
// CHECK: st.global.v4.b32
func.func @relu_chain(%x: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x96xf32>) outs(%e : tensor<64x96xf32>) {
    ^bb0(%v: f32, %o: f32):
      %y = arith.maximumf %v, %zero : f32
      linalg.yield %y : f32
  } -> tensor<64x96xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<64x96xf32>) outs(%e : tensor<64x96xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = arith.mulf %v, %two : f32
      %y = arith.addf %s, %one : f32
      linalg.yield %y : f32
  } -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}

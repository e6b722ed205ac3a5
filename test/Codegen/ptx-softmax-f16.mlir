// Softmax of f16 on sm_90 is the row kernel (ke-gpu-row-softmax): each
// f16 vector widened to f32 after the load, the row's (max, sum) pairs
// combined by butterfly shuffles in f32, the result rounded to f16 once
// on the store (the f16 reference check compares against an accurate
// result, which summing in f16 missed).
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK-LABEL: .visible .entry kernel_kernel(
// CHECK: ld.global.nc.v4.b32
// CHECK: cvt.f32.f16
// CHECK: shfl.sync.bfly.b32
// CHECK: cvt.rn.f16x2.f32
// CHECK: st.global.v4.b32
// CHECK: ret;
func.func @softmax_f16(%x: tensor<16x512xf16>) -> tensor<16x512xf16> {
  %e = tensor.empty() : tensor<16x512xf16>
  %r = linalg.softmax dimension(1) ins(%x : tensor<16x512xf16>) outs(%e : tensor<16x512xf16>) -> tensor<16x512xf16>
  return %r : tensor<16x512xf16>
}

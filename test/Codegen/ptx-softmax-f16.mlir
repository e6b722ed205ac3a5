// Softmax of f16 on sm_90 keeps one row per thread, summing in the
// reference's order: the block-per-row schedule's f32 block combine differs
// from the f16 reference beyond the f16 tolerance (see GpuSoftmaxRule.cpp).
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK-LABEL: .visible .entry kernel_kernel(
// CHECK-NOT: shfl.sync
// CHECK: ret;
func.func @softmax_f16(%x: tensor<16x512xf16>) -> tensor<16x512xf16> {
  %e = tensor.empty() : tensor<16x512xf16>
  %r = linalg.softmax dimension(1) ins(%x : tensor<16x512xf16>) outs(%e : tensor<16x512xf16>) -> tensor<16x512xf16>
  return %r : tensor<16x512xf16>
}

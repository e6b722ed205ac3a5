// Softmax of f16 on sm_90: a row per block, 128-bit loads of eight halves,
// the block combines of the max and sum in f32 through warp shuffles.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK-LABEL: .visible .entry kernel_kernel(
// CHECK-DAG: ld.global.v4.b32
// CHECK-DAG: cvt.f32.f16
// CHECK-DAG: shfl.sync.bfly.b32
// CHECK-DAG: st.global.v4.b32
// CHECK-NOT: .local
func.func @softmax_f16(%x: tensor<16x512xf16>) -> tensor<16x512xf16> {
  %e = tensor.empty() : tensor<16x512xf16>
  %r = linalg.softmax dimension(1) ins(%x : tensor<16x512xf16>) outs(%e : tensor<16x512xf16>) -> tensor<16x512xf16>
  return %r : tensor<16x512xf16>
}

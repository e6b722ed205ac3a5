// Softmax on sm_90: one launch, one row per thread, exponentials through
// ex2.approx, the row maximum and sum reduced in each thread.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: .target sm_90
// CHECK: .visible .entry kernel_kernel(
// CHECK-DAG: max.f32
// CHECK-DAG: ex2.approx
// CHECK-DAG: add.rn.f32
// CHECK-DAG: div.rn.f32
func.func @softmax(%x: tensor<16x128xf32>) -> tensor<16x128xf32> {
  %e = tensor.empty() : tensor<16x128xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<16x128xf32>) outs(%e : tensor<16x128xf32>) -> tensor<16x128xf32>
  return %r : tensor<16x128xf32>
}

// Softmax on sm_90: one launch, a row per block; each thread loads its
// chunk with 128-bit loads, the row max and sum are combined across the
// block with warp shuffles (shfl.sync.bfly), exponentials through
// ex2.approx, and nothing goes to local memory.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s --check-prefix=NOLOCAL

// CHECK: .target sm_90
// CHECK-LABEL: .visible .entry kernel_kernel(
// CHECK-DAG: ld.global{{(.nc)?}}.v4.b32
// CHECK-DAG: max.f32
// CHECK-DAG: shfl.sync.bfly.b32
// CHECK-DAG: ex2.approx
// CHECK-DAG: bar.sync
// CHECK-DAG: div.rn.f32
// CHECK-DAG: st.global.v4.b32
// NOLOCAL-NOT: .local
func.func @softmax(%x: tensor<16x128xf32>) -> tensor<16x128xf32> {
  %e = tensor.empty() : tensor<16x128xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<16x128xf32>) outs(%e : tensor<16x128xf32>) -> tensor<16x128xf32>
  return %r : tensor<16x128xf32>
}

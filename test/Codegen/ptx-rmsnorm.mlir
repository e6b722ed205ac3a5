// The sum of squares of an rmsnorm on sm_90: each thread squares and sums
// its chunk (v4 loads, mul then add), the block combines the partial sums
// with the addition alone (gpu.all_reduce: shfl.sync.bfly, no squaring
// after the shuffles), one thread stores the row.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: .visible .entry kernel_kernel(
// CHECK: ld.global{{(.nc)?}}.v4.b32
// CHECK: mul.rn.f32
// CHECK: add.rn.f32
// CHECK: st.shared
// CHECK: bar.sync
// CHECK: shfl.sync.bfly.b32
// CHECK-NOT: mul.rn.f32
// CHECK: st.global
func.func @sum_squares(%x: tensor<64x1024xf32>) -> tensor<64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1024xf32>) outs(%c : tensor<64xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %q = arith.mulf %v, %v : f32
      %s = arith.addf %q, %acc : f32
      linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

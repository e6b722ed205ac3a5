// A mean: the row sums' consumer (the scaling) runs in the reduction's
// launch, after the block-wide combine, and nothing is left on the host.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: .visible .entry kernel_kernel(
// CHECK: shfl.sync.bfly.b32
// CHECK: add.rn.f32
// CHECK: mul.rn.f32 {{.*}}0f3B000000
// CHECK: st.global.b32
// CHECK-NOT: .entry
func.func @row_mean(%x: tensor<64x512xf32>) -> tensor<64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.reduce ins(%x : tensor<64x512xf32>) outs(%c : tensor<64xf32>) dimensions = [1]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  %n = arith.constant 0.001953125 : f32
  %m = linalg.generic {indexing_maps = [affine_map<(a) -> (a)>, affine_map<(a) -> (a)>], iterator_types = ["parallel"]}
      ins(%r : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %y = arith.mulf %v, %n : f32
      linalg.yield %y : f32
  } -> tensor<64xf32>
  return %m : tensor<64xf32>
}

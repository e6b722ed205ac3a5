// A reduction to a 0-d result has no parallel loop to map: the kernel runs
// in one launch of one thread (grid and block 1x1x1).
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: .target sm_90
// CHECK: .visible .entry kernel_kernel(
// CHECK: add.rn.f32
// CHECK: st.global.b32
func.func @global_sum(%x: tensor<4096xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%x : tensor<4096xf32>) outs(%c : tensor<f32>) dimensions = [0]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

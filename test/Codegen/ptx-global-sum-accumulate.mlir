// A global sum into an accumulator argument (the init is the result
// buffer's value, not a fill): thread 0 of launch 2 reads it, adds the
// block's sum of the partials and stores.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: .visible .entry kernel_kernel(
// CHECK: shfl.sync.bfly.b32
// CHECK: .visible .entry kernel_kernel_0(
// CHECK: shfl.sync.bfly.b32
// CHECK: ld.global{{(.nc)?}}.b32
// CHECK-NEXT: add.rn.f32
// CHECK-NEXT: st.global.b32
// CHECK-NOT: .entry
func.func @accumulate(%x: tensor<1048576xf32>, %o: tensor<f32>) -> tensor<f32> {
  %r = linalg.reduce ins(%x : tensor<1048576xf32>) outs(%o : tensor<f32>) dimensions = [0]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

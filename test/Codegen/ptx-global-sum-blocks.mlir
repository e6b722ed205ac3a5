// A global sum large enough for many blocks on sm_90: two launches.
// Launch 1 (split_reduction, a row per block): each block reduces its
// chunk (v4 loads, the threads combined with shfl.sync.bfly) into its
// partial result in a scratch buffer. Launch 2 (made by the lowering from
// the combine the schedule left on the host): one block of 256 threads,
// each summing every 256th partial in order, combined with shfl.sync.bfly;
// thread 0 adds the init and stores the result.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: .visible .entry kernel_kernel(
// CHECK: ld.global{{(.nc)?}}.v4.b32
// CHECK: shfl.sync.bfly.b32
// CHECK: st.global.b32
// CHECK: .visible .entry kernel_kernel_0(
// CHECK: .maxntid 256, 1, 1
// CHECK: ld.global{{(.nc)?}}.b32
// CHECK: shfl.sync.bfly.b32
// CHECK: bar.sync
// CHECK: st.global.b32
// CHECK-NOT: .entry
func.func @global_sum(%x: tensor<1048576xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%x : tensor<1048576xf32>) outs(%c : tensor<f32>) dimensions = [0]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}


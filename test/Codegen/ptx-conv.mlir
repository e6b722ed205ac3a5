// The default CUDA schedule of a channels-last convolution lowers to a
// GEMM-like kernel: each thread holds a 4 (output columns) x 8 (output
// channels) register tile, steps through the window one filter row and 4
// input channels at a time with 128-bit loads of the input (channels are
// contiguous) and of the filter (output channels are contiguous), FMAs on
// the register tile, which stays in registers across the window and
// channel loops and is written once with 128-bit stores.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s --check-prefix=SCALAR
// SCALAR-NOT: ld.global{{(.nc)?}}.b32
// SCALAR-NOT: st.global.b32

// CHECK: .visible .entry kernel_kernel(
// CHECK: [[LOOP:\$L__BB[0-9_]+]]:
// CHECK: ld.global{{(.nc)?}}.v4.b32
// CHECK: fma.rn.f32
// CHECK-NOT: st.global
// CHECK: bra{{.*}}[[LOOP]]
// CHECK-NOT: ld.global
// CHECK: st.global.v4.b32
func.func @conv(%i: tensor<2x18x18x32xf32>, %f: tensor<3x3x32x64xf32>) -> tensor<2x16x16x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x16x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<2x16x16x64xf32>) -> tensor<2x16x16x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%i, %f : tensor<2x18x18x32xf32>, tensor<3x3x32x64xf32>) outs(%c : tensor<2x16x16x64xf32>) -> tensor<2x16x16x64xf32>
  return %r : tensor<2x16x16x64xf32>
}

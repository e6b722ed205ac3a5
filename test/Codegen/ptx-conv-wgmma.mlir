// A channels-last bf16 convolution on sm_90a through the whole CUDA
// lowering: an implicit GEMM on wgmma (m64n128k16, the filter MN-major:
// trans-b 1), the input gathered per filter tap with cp.async, no local
// memory.
// RUN: ke-opt compile %s --target cuda:sm_90a --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: .target sm_90a
// CHECK-NOT: .local
// CHECK: cp.async.cg.shared.global
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, {{ *}}1, 0, {{ *}}1;
// CHECK: st.global.v2.b32
// CHECK-NOT: .local
func.func @conv(%i: tensor<2x18x18x64xbf16>, %f: tensor<3x3x64x128xbf16>) -> tensor<2x16x16x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x16x128xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<2x16x16x128xf32>) -> tensor<2x16x16x128xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%i, %f : tensor<2x18x18x64xbf16>, tensor<3x3x64x128xbf16>) outs(%c : tensor<2x16x16x128xf32>) -> tensor<2x16x16x128xf32>
  return %r : tensor<2x16x16x128xf32>
}

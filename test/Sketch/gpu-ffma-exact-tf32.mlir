// A bf16 channels-last convolution into f32 (a model cast to bf16): where
// no native 16-bit tensor-core kernel takes it (gpu.mma and gpu.wgmma take
// matmuls; gpu.wgmma, on sm_90a, some convolutions), gpu.ffma does. Its
// lowering extends the operands to f32 first, which TF32 holds exactly, so
// its mma.sync tiles are the default on every sm_80+ target: the PTX has
// TF32 mma.sync although cuda:sm_90 allows no TF32 for f32 data.
// (Measured on KernelBench level 2 in bf16: docs/kernelbench.md, session 26.)
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>&1 | FileCheck %s --check-prefix=PTX
// Before sm_80 there is no TF32 mma.sync: no knob.
// RUN: ke-opt sketches %s --target cuda:sm_75 | FileCheck %s --check-prefix=OLD
// On sm_90a gpu.wgmma takes this one (its epilogue reads the result
// element for element) in bf16 itself, and stays the default.
// RUN: ke-opt compile %s --target cuda:sm_90a --emit=asm -o - 2>&1 | FileCheck %s --check-prefix=WGMMA

// CHECK-LABEL: // -----// workload {{.*}} linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT: // sketch gpu.ffma
// CHECK: // knob mma: 0 [1]
// CHECK: transform.param.constant {{{.*}}mma = 1 : i64}
// PTX-DAG: linalg.conv_2d_nhwc_hwcf (gpu.ffma)
// PTX-DAG: cvt.f32.bf16
// PTX-DAG: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// OLD-NOT: knob mma
// WGMMA-DAG: linalg.conv_2d_nhwc_hwcf (gpu.wgmma)
// WGMMA-DAG: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32.bf16.bf16
func.func @bf16_conv(%i: tensor<32x58x58x64xbf16>, %f: tensor<3x3x64x64xbf16>) -> tensor<32x56x56x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x56x56x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<32x56x56x64xf32>) -> tensor<32x56x56x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%i, %f : tensor<32x58x58x64xbf16>, tensor<3x3x64x64xbf16>) outs(%c : tensor<32x56x56x64xf32>) -> tensor<32x56x56x64xf32>
  return %r : tensor<32x56x56x64xf32>
}

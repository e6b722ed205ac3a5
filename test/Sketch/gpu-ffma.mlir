// gpu.ffma takes f32 matmuls, batch matmuls and channels-last convolutions
// on CUDA targets (not on ROCm: cp.async). Its knobs: block tiles (multiples
// of the 32 x 64 warp tile, none past the first that covers the extent),
// 8 or 16 columns per thread, K rows per stage, stages, grouped
// rasterization; the script marks the op for ke-gpu-ffma-matmuls. K
// tiles of 16 by default where a matmul's K is 512 or more, else 8. Where
// its default blocks fill the GPU it gives the untuned default (the
// compile line names it), elsewhere gpu.tile does.
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s
// RUN: ke-opt sketches %s --target rocm:gfx942 | FileCheck %s --check-prefix=ROCM
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT
// Where the target allows TF32 (+tf32, +3xtf32), mma.sync tiles (the
// `mma` knob) are the default, marked on the op; elsewhere no knob.
// RUN: ke-opt sketches %s --target cuda:sm_90+3xtf32 | FileCheck %s --check-prefix=TC
// TC: // sketch gpu.ffma
// TC: // knob group.m: 1 4 [8] 16
// TC-NEXT: // knob mma: 0 [1]
// TC: transform.param.constant {{{.*}}mma = 1 : i64{{.*}}}

// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.ffma
// CHECK-NEXT: // knob block.m: 32 64 [128] 256
// CHECK-NEXT: // knob block.n: 64 [128] 256
// CHECK-NEXT: // knob thread.n: [8] 16
// CHECK-NEXT: // knob k.tile: 4 8 [16] 32
// CHECK-NEXT: // knob stages: 2 3 [4] 5
// CHECK-NEXT: // knob group.m: 1 4 [8] 16
// CHECK-NOT: knob mma
// CHECK: transform.param.constant {block_m = 128 : i64, block_n = 128 : i64, k_tile = 16 : i64, stages = 4 : i64, group_m = 8 : i64, thread_n = 8 : i64}
// CHECK: transform.annotate {{.*}} "ke.ffma"
// CHECK: // sketch gpu.tile
// ROCM-NOT: gpu.ffma
// DEFAULT: linalg.matmul (gpu.ffma)
func.func @large(%a: tensor<2048x512xf32>, %b: tensor<512x2048xf32>) -> tensor<2048x2048xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048x2048xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2048x512xf32>, tensor<512x2048xf32>) outs(%c : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %r : tensor<2048x2048xf32>
}

// A small one: 4 x 2 blocks of 32 x 64 at most; gpu.tile's default. K
// 300: tiles of 8.
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.ffma
// CHECK-NEXT: // knob block.m: [32] 64 128
// CHECK-NEXT: // knob block.n: [64] 128
// CHECK-NEXT: // knob thread.n: [8] 16
// CHECK-NEXT: // knob k.tile: 4 [8] 16 32
// DEFAULT: linalg.matmul (gpu.tile)
func.func @small(%a: tensor<100x300xf32>, %b: tensor<300x100xf32>) -> tensor<100x100xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x100xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<100x100xf32>) -> tensor<100x100xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x300xf32>, tensor<300x100xf32>) outs(%c : tensor<100x100xf32>) -> tensor<100x100xf32>
  return %r : tensor<100x100xf32>
}

// A channels-last convolution is an implicit GEMM.
// CHECK-LABEL: // -----// workload {{.*}} linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT: // sketch gpu.ffma
// DEFAULT: linalg.conv_2d_nhwc_hwcf (gpu.ffma)
func.func @conv(%i: tensor<32x58x58x64xf32>, %f: tensor<3x3x64x64xf32>) -> tensor<32x56x56x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x56x56x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<32x56x56x64xf32>) -> tensor<32x56x56x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%i, %f : tensor<32x58x58x64xf32>, tensor<3x3x64x64xf32>) outs(%c : tensor<32x56x56x64xf32>) -> tensor<32x56x56x64xf32>
  return %r : tensor<32x56x56x64xf32>
}

// A channels-first convolution, as PyTorch's models bring it: ke-convs-to-
// channels-last runs it channels-last, and the transpose of its result
// back to channels-first joins its kernel as the epilogue (gpu.ffma
// stores through the permutation).
// CHECK-LABEL: // -----// workload {{.*}} linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT: // sketch gpu.ffma
// CHECK: transform.annotate {{.*}} "ke.ffma.epilogue"
// CHECK: // -----// workload {{.*}} linalg.transpose
// CHECK-NEXT: // fused into workload
// DEFAULT: linalg.conv_2d_nhwc_hwcf (gpu.ffma)
func.func @conv_nchw(%i: tensor<32x64x56x56xf32>, %f: tensor<64x64x1x1xf32>) -> tensor<32x64x56x56xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64x56x56xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<32x64x56x56xf32>) -> tensor<32x64x56x56xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%i, %f : tensor<32x64x56x56xf32>, tensor<64x64x1x1xf32>) outs(%c : tensor<32x64x56x56xf32>) -> tensor<32x64x56x56xf32>
  return %r : tensor<32x64x56x56xf32>
}

// KernelBench's Conv2d_Min_Tanh_Tanh: 128 images of 254 x 254 output
// pixels, M = 8.3 million rows, 258,064 warp tiles of rows: more tile rows
// than a grid's y takes, so gpu.ffma lays every tile along x.
// CHECK-LABEL: // -----// workload {{.*}} linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT: // sketch gpu.ffma
// DEFAULT: linalg.conv_2d_nhwc_hwcf (gpu.ffma)
func.func @conv_many_rows(%i: tensor<128x16x256x256xf32>, %f: tensor<64x16x3x3xf32>) -> tensor<128x64x254x254xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x64x254x254xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<128x64x254x254xf32>) -> tensor<128x64x254x254xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%i, %f : tensor<128x16x256x256xf32>, tensor<64x16x3x3xf32>) outs(%c : tensor<128x64x254x254xf32>) -> tensor<128x64x254x254xf32>
  return %r : tensor<128x64x254x254xf32>
}

// A channels-last 3-D convolution (KernelBench's Conv3d problems, after
// ke-convs-to-channels-last) is an implicit GEMM as well.
// CHECK-LABEL: // -----// workload {{.*}} linalg.conv_3d_ndhwc_dhwcf
// CHECK-NEXT: // sketch gpu.ffma
// ROCM-LABEL: // -----// workload {{.*}} linalg.conv_3d_ndhwc_dhwcf
// ROCM-NOT: gpu.ffma
// DEFAULT: linalg.conv_3d_ndhwc_dhwcf (gpu.ffma)
func.func @conv3d(%i: tensor<16x18x34x34x32xf32>, %f: tensor<3x3x3x32x64xf32>) -> tensor<16x16x32x32x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16x32x32x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16x32x32x64xf32>) -> tensor<16x16x32x32x64xf32>
  %r = linalg.conv_3d_ndhwc_dhwcf {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
       ins(%i, %f : tensor<16x18x34x34x32xf32>, tensor<3x3x3x32x64xf32>) outs(%c : tensor<16x16x32x32x64xf32>) -> tensor<16x16x32x32x64xf32>
  return %r : tensor<16x16x32x32x64xf32>
}

// A channels-last 1-D convolution (PyTorch's Conv1d, after
// ke-convs-to-channels-last) is an implicit GEMM too: M the batch's output
// positions, K the taps by the channels.
// CHECK-LABEL: // -----// workload {{.*}} linalg.conv_1d_nwc_wcf
// CHECK-NEXT: // sketch gpu.ffma
// ROCM-LABEL: // -----// workload {{.*}} linalg.conv_1d_nwc_wcf
// ROCM-NOT: gpu.ffma
// DEFAULT: linalg.conv_1d_nwc_wcf (gpu.ffma)
func.func @conv1d(%i: tensor<16x1026x64xf32>, %f: tensor<3x64x128xf32>) -> tensor<16x1024x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x1024x128xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x1024x128xf32>) -> tensor<16x1024x128xf32>
  %r = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
       ins(%i, %f : tensor<16x1026x64xf32>, tensor<3x64x128xf32>) outs(%c : tensor<16x1024x128xf32>) -> tensor<16x1024x128xf32>
  return %r : tensor<16x1024x128xf32>
}

// With 16 filters (of a warp's 64 columns) a 3-D convolution keeps
// gpu.tile's default; gpu.ffma stays a candidate.
// CHECK-LABEL: // -----// workload {{.*}} linalg.conv_3d_ndhwc_dhwcf
// CHECK-NEXT: // sketch gpu.ffma
// DEFAULT: linalg.conv_3d_ndhwc_dhwcf (gpu.tile)
func.func @conv3d_few_filters(%i: tensor<16x18x34x34x32xf32>, %f: tensor<3x3x3x32x16xf32>) -> tensor<16x16x32x32x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16x32x32x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16x32x32x16xf32>) -> tensor<16x16x32x32x16xf32>
  %r = linalg.conv_3d_ndhwc_dhwcf {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
       ins(%i, %f : tensor<16x18x34x34x32xf32>, tensor<3x3x3x32x16xf32>) outs(%c : tensor<16x16x32x32x16xf32>) -> tensor<16x16x32x32x16xf32>
  return %r : tensor<16x16x32x32x16xf32>
}

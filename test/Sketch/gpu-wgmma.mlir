// gpu.wgmma for 16-bit matmuls on sm_90a: the script marks the matmul with
// its knobs (and a fused consumer as its epilogue) and bufferizes;
// ke-gpu-wgmma-matmuls builds the kernel (128 x 128 blocks by default where
// 128 x 256 ones would be fewer than the SMs; tiles loaded by TMA, except a
// convolution's, whose A rows are gathered). sm_90 (no wgmma) keeps
// gpu.mma.
// RUN: ke-opt sketches %s --target cuda:sm_90a | FileCheck %s
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s --check-prefix=SM90
// RUN: ke-opt sketches %s --target cuda:sm_90a+tf32 | FileCheck %s --check-prefix=TF32

// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.wgmma
// CHECK-NEXT: // knob block.m: 64 [128] 256
// CHECK-NEXT: // knob block.n: 64 [128] 256{{$}}
// CHECK-NEXT: // knob stages: 3 [4] 5 6{{$}}
// CHECK-NEXT: // knob split.k: [1] 2 4{{$}}
// CHECK-NEXT: // knob group.m: 1 4 [8] 16{{$}}
// CHECK-NEXT: // knob tma: 0 [1] 2{{$}}
// CHECK: %[[MM:.*]] = transform.structured.match ops{["linalg.matmul"]} attributes {ke.anchor}
// CHECK: %[[KNOBS:.*]] = transform.param.constant {block_m = 128 : i64, block_n = 128 : i64, stages = 4 : i64, group_m = 8 : i64, tma = 1 : i64} -> !transform.any_param
// CHECK: transform.annotate %[[MM]] "ke.wgmma" = %[[KNOBS]]
// CHECK-NOT: ke.wgmma.epilogue
// CHECK: transform.bufferization.one_shot_bufferize
// CHECK: // sketch gpu.mma
// SM90-LABEL: // -----// workload {{.*}} linalg.matmul
// SM90-NEXT: // sketch gpu.mma
// SM90-NOT: gpu.wgmma
func.func @matmul(%a: tensor<512x256xbf16>, %b: tensor<256x512xbf16>) -> tensor<512x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<512x256xbf16>, tensor<256x512xbf16>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}

// A fused consumer (bias, ReLU, bf16 result) is marked as the epilogue.
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.wgmma
// CHECK: transform.annotate %{{.*}} "ke.wgmma" =
// CHECK: %[[CONSUMER:.*]] = transform.structured.match attributes {ke.consumer}
// CHECK: transform.annotate %[[CONSUMER]] "ke.wgmma.epilogue" : !transform.any_op
func.func @linear_relu(%a: tensor<256x128xbf16>, %b: tensor<128x256xbf16>, %bias: tensor<256xf32>) -> tensor<256x256xbf16> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x128xbf16>, tensor<128x256xbf16>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  %o = tensor.empty() : tensor<256x256xbf16>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%r, %bias : tensor<256x256xf32>, tensor<256xf32>) outs(%o : tensor<256x256xbf16>) {
  ^bb0(%x: f32, %bv: f32, %out: bf16):
    %y = arith.addf %x, %bv : f32
    %m = arith.maximumf %y, %z : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x256xbf16>
  return %g : tensor<256x256xbf16>
}

// f32 operands: CUDA cores without +tf32; with it, wgmma in TF32, B stored
// K x N too (its tiles transposed as they are copied: wgmma transposes only
// 16-bit operands in shared memory) ...
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NOT: gpu.wgmma
// CHECK: // sketch gpu.tile
// TF32-LABEL: // -----// workload {{.*}} linalg.matmul
// TF32: // -----// workload {{.*}} linalg.matmul
// TF32: // -----// workload {{.*}} linalg.matmul
// TF32-NEXT: // sketch gpu.wgmma
func.func @f32(%a: tensor<256x128xf32>, %b: tensor<128x256xf32>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x128xf32>, tensor<128x256xf32>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

// ... and B stored N x K takes wgmma with TF32 (K tiles of 32 f32 elements).
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NOT: gpu.wgmma
// CHECK: // sketch gpu.tile
// TF32: // -----// workload {{.*}} linalg.matmul
// TF32-NEXT: // sketch gpu.wgmma
// TF32-NEXT: // knob block.m: 64 [128] 256
// TF32-NEXT: // knob block.n: 64 [128] 256{{$}}
// TF32-NEXT: // knob stages: 3 [4] 5 6{{$}}
func.func @f32_nk(%a: tensor<256x128xf32>, %w: tensor<256x128xf32>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %w : tensor<256x128xf32>, tensor<256x128xf32>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

// A channels-last convolution with 64-multiple channels is an implicit
// GEMM for gpu.wgmma: M = 2 x 16 x 16 pixels, N = 128 filters, K = 3 x 3 x
// 64; on sm_90 it keeps the CUDA-core schedule.
// CHECK-LABEL: // -----// workload {{.*}} linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT: // sketch gpu.wgmma
// CHECK-NEXT: // knob block.m: 64 [128] 256
// CHECK-NEXT: // knob block.n: 64 [128]{{$}}
// CHECK-NEXT: // knob stages: 3 [4] 5 6{{$}}
// CHECK-NOT: // knob tma
// CHECK: transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf"]} attributes {ke.anchor}
// CHECK: transform.annotate %{{.*}} "ke.wgmma" =
// (sm_90: no wgmma; gpu.ffma takes the 16-bit convolution, extended to
// f32, gpu-ffma-exact-tf32.mlir.)
// SM90-LABEL: // -----// workload {{.*}} linalg.conv_2d_nhwc_hwcf
// SM90-NEXT: // sketch gpu.ffma
func.func @conv(%i: tensor<2x18x18x64xbf16>, %f: tensor<3x3x64x128xbf16>) -> tensor<2x16x16x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x16x128xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<2x16x16x128xf32>) -> tensor<2x16x16x128xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%i, %f : tensor<2x18x18x64xbf16>, tensor<3x3x64x128xbf16>) outs(%c : tensor<2x16x16x128xf32>) -> tensor<2x16x16x128xf32>
  return %r : tensor<2x16x16x128xf32>
}

// 32 channels: a K tile would span two filter taps, so no gpu.wgmma
// (gpu.ffma takes it).
// CHECK-LABEL: // -----// workload {{.*}} linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT: // sketch gpu.ffma
func.func @conv_narrow(%i: tensor<2x18x18x32xbf16>, %f: tensor<3x3x32x128xbf16>) -> tensor<2x16x16x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x16x128xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<2x16x16x128xf32>) -> tensor<2x16x16x128xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%i, %f : tensor<2x18x18x32xbf16>, tensor<3x3x32x128xbf16>) outs(%c : tensor<2x16x16x128xf32>) -> tensor<2x16x16x128xf32>
  return %r : tensor<2x16x16x128xf32>
}

// A stored K x M (torch.matmul(A.T, B)) takes gpu.wgmma (A read MN-major
// with wgmma's transpose); gpu.mma refuses it (sm_90: gpu.tile).
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.wgmma
// SM90: // -----// workload {{.*}} linalg.matmul
// SM90-NEXT: // sketch gpu.tile
func.func @transposed_a(%a: tensor<128x256xbf16>, %b: tensor<128x256xbf16>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : tensor<128x256xbf16>, tensor<128x256xbf16>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

// Shapes no tile divides (4000 x 3000 x 2000): gpu.wgmma's partial tiles
// are zero-filled and masked, so its block knobs go up to the first tile
// that covers the extent. gpu.mma's block tiles must divide the matmul: no
// block.n divides 3000, so it does not apply (its knob would be empty).
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.wgmma
// CHECK-NEXT: // knob block.m: 64 [128] 256
// CHECK-NEXT: // knob block.n: 64 128 [256]{{$}}
// CHECK-NOT: // sketch gpu.mma
// CHECK: // sketch gpu.tile
// SM90: // -----// workload {{.*}} linalg.matmul
// SM90-NEXT: // sketch gpu.tile
func.func @irregular(%a: tensor<4000x2000xbf16>, %b: tensor<2000x3000xbf16>) -> tensor<4000x3000xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4000x3000xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<4000x3000xf32>) -> tensor<4000x3000xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4000x2000xbf16>, tensor<2000x3000xbf16>) outs(%c : tensor<4000x3000xf32>) -> tensor<4000x3000xf32>
  return %r : tensor<4000x3000xf32>
}

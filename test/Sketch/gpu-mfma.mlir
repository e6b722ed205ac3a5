// gpu.mfma for 16-bit matmuls, batch matmuls and channels-last convolutions
// on CDNA (gfx90a, gfx94x): the script marks the op with its knobs (and a
// fused consumer as its epilogue) and bufferizes; ke-gpu-mfma-matmuls builds
// the kernel. gfx908 (no 16x16x16 bf16 MFMA), CUDA targets and f32 keep the
// other rules.
// RUN: ke-opt sketches %s --target rocm:gfx942 | FileCheck %s
// RUN: ke-opt sketches %s --target rocm:gfx90a | FileCheck %s
// RUN: ke-opt sketches %s --target rocm:gfx908 | FileCheck %s --check-prefix=OTHER
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s --check-prefix=OTHER

// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.mfma
// CHECK-NEXT: // knob block.m: 32 64 [128] 256
// CHECK-NEXT: // knob block.n: 32 64 [128] 256{{$}}
// CHECK-NEXT: // knob waves.m: 1 [2] 4{{$}}
// CHECK-NEXT: // knob waves.n: 1 [2] 4{{$}}
// CHECK-NEXT: // knob k.tile: 16 [32] 64{{$}}
// CHECK-NEXT: // knob group.m: 1 4 [8] 16{{$}}
// CHECK: %[[MM:.*]] = transform.structured.match ops{["linalg.matmul"]} attributes {ke.anchor}
// CHECK: %[[KNOBS:.*]] = transform.param.constant {block_m = 128 : i64, block_n = 128 : i64, waves_m = 2 : i64, waves_n = 2 : i64, k_tile = 32 : i64, group_m = 8 : i64} -> !transform.any_param
// CHECK: transform.annotate %[[MM]] "ke.mfma" = %[[KNOBS]]
// CHECK-NOT: ke.mfma.epilogue
// CHECK: transform.bufferization.one_shot_bufferize
// OTHER-LABEL: // -----// workload {{.*}} linalg.matmul
// OTHER-NOT: gpu.mfma
func.func @matmul(%a: tensor<512x256xbf16>, %b: tensor<256x512xbf16>) -> tensor<512x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<512x256xbf16>, tensor<256x512xbf16>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}

// A fused consumer (bias, ReLU, bf16 result) is marked as the epilogue; a
// small N offers only the block tiles up to the first that covers it.
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NEXT: // sketch gpu.mfma
// CHECK-NEXT: // knob block.m: 32 64 [128] 256
// CHECK-NEXT: // knob block.n: 32 [64]{{$}}
// CHECK: transform.annotate %{{.*}} "ke.mfma" =
// CHECK: %[[CONSUMER:.*]] = transform.structured.match attributes {ke.consumer}
// CHECK: transform.annotate %[[CONSUMER]] "ke.mfma.epilogue" : !transform.any_op
func.func @linear_relu(%a: tensor<256x128xf16>, %b: tensor<128x48xf16>, %bias: tensor<48xf32>) -> tensor<256x48xbf16> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x48xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x48xf32>) -> tensor<256x48xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x128xf16>, tensor<128x48xf16>) outs(%c : tensor<256x48xf32>) -> tensor<256x48xf32>
  %o = tensor.empty() : tensor<256x48xbf16>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%r, %bias : tensor<256x48xf32>, tensor<48xf32>) outs(%o : tensor<256x48xbf16>) {
  ^bb0(%x: f32, %bv: f32, %out: bf16):
    %y = arith.addf %x, %bv : f32
    %m = arith.maximumf %y, %z : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x48xbf16>
  return %g : tensor<256x48xbf16>
}

// Batch matmuls and NHWC convolutions too.
// CHECK-LABEL: // -----// workload {{.*}} linalg.batch_matmul
// CHECK-NEXT: // sketch gpu.mfma
func.func @bmm(%a: tensor<4x128x64xbf16>, %b: tensor<4x64x128xbf16>) -> tensor<4x128x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x128x128xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x128x64xbf16>, tensor<4x64x128xbf16>) outs(%c : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  return %r : tensor<4x128x128xf32>
}

// CHECK-LABEL: // -----// workload {{.*}} linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT: // sketch gpu.mfma
func.func @conv(%i: tensor<2x10x10x16xf16>, %f: tensor<3x3x16x32xf16>) -> tensor<2x8x8x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<2x8x8x32xf32>) -> tensor<2x8x8x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%i, %f : tensor<2x10x10x16xf16>, tensor<3x3x16x32xf16>) outs(%c : tensor<2x8x8x32xf32>) -> tensor<2x8x8x32xf32>
  return %r : tensor<2x8x8x32xf32>
}

// f32 operands and K not a multiple of 8 stay on the other GPU rules.
// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NOT: gpu.mfma
// CHECK: // sketch gpu.tile
func.func @f32(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>) outs(%c : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

// CHECK-LABEL: // -----// workload {{.*}} linalg.matmul
// CHECK-NOT: gpu.mfma
// CHECK: // sketch gpu.tile
func.func @odd_k(%a: tensor<128x60xbf16>, %b: tensor<60x128xbf16>) -> tensor<128x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x60xbf16>, tensor<60x128xbf16>) outs(%c : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

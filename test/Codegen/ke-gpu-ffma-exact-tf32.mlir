// gpu.ffma on a 16-bit convolution: its bf16 (f16) operands are extended
// into f32 scratch buffers by a kernel each (cp.async moves bytes, the
// tiles need f32), and with mma.sync tiles the products are TF32 from the
// start: extended 16-bit values are exact in TF32, so ke-gpu-vector-to-mma
// leaves them on every target (no error where the target allows no TF32,
// no 3xTF32 split where it asks for one).
// RUN: ke-opt %s --ke-gpu-ffma-matmuls --ke-gpu-vector-to-mma | FileCheck %s
// RUN: ke-opt %s --ke-gpu-ffma-matmuls --ke-gpu-vector-to-mma="allow-tf32=true tf32x3=true" | FileCheck %s

// CHECK-LABEL: func.func @bf16_conv
// CHECK: %[[XS:.+]] = memref.alloc() : memref<1x10x10x16xf32>
// CHECK: gpu.launch
// CHECK: memref.load {{.*}} : memref<1600xbf16>
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: memref.store {{.*}} : memref<1600xf32>
// CHECK: %[[WS:.+]] = memref.alloc() : memref<3x3x16x64xf32>
// CHECK: gpu.launch
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK-NOT: arith.andi
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
// CHECK-NOT: arith.andi
// CHECK: scf.yield
func.func @bf16_conv(%x: memref<1x10x10x16xbf16>, %w: memref<3x3x16x64xbf16>, %y: memref<1x8x8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x8x8x64xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
    ke.ffma = {block_m = 32 : i64, block_n = 64 : i64, k_tile = 8 : i64, stages = 2 : i64, group_m = 1 : i64, thread_n = 8 : i64, mma = 1 : i64}}
    ins(%x, %w : memref<1x10x10x16xbf16>, memref<3x3x16x64xbf16>) outs(%y : memref<1x8x8x64xf32>)
  return
}

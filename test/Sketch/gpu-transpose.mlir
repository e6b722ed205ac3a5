// gpu.transpose takes transposes whose input and output hold different
// dimensions innermost (after merging the dimensions that move together),
// on every GPU target, and gives their untuned default where both moved
// extents fill a 32 x 32 tile: tiles through shared memory with 32 x 8
// threads. Its script only marks the op for ke-gpu-transpose. An image's 3
// channels keep gpu.elementwise's default, gpu.transpose a candidate. A transpose that keeps the innermost dimension is
// a copy along it and stays gpu.elementwise's. (An elementwise consumer
// never joins a transpose's kernel: ke-fold-broadcasts-into-consumers has
// folded the transpose into it.)
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s
// RUN: ke-opt sketches %s --target rocm:gfx942 | FileCheck %s
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT
// The kernel is plain GPU dialect (workgroup memory and a barrier): it
// builds for ROCm too, its tile in 32 x 33 x 4 bytes of LDS.
// RUN: ke-opt compile %s --target rocm:gfx942 --emit=asm -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROCM-DEFAULT
// ROCM-DEFAULT: linalg.transpose (gpu.transpose)
// ROCM-DEFAULT-NEXT: 4224 bytes LDS

// CHECK-LABEL: // -----// workload {{.*}} linalg.transpose
// CHECK-NEXT: // sketch gpu.transpose
// CHECK-NEXT: // knob tile: 16 [32] 64
// CHECK-NEXT: // knob rows: 2 4 [8] 16
// CHECK: transform.annotate {{.*}} "ke.transpose" = %{{.*}}
// CHECK: // sketch gpu.elementwise
// DEFAULT: linalg.transpose (gpu.transpose)
func.func @nchw_to_nhwc(%x: tensor<8x64x28x28xf32>) -> tensor<8x28x28x64xf32> {
  %e = tensor.empty() : tensor<8x28x28x64xf32>
  %t = linalg.transpose ins(%x : tensor<8x64x28x28xf32>) outs(%e : tensor<8x28x28x64xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<8x28x28x64xf32>
}

// CHECK-LABEL: // -----// workload {{.*}} linalg.transpose
// CHECK-NOT: gpu.transpose
// CHECK: // sketch gpu.elementwise
// DEFAULT: linalg.transpose (gpu.elementwise)
func.func @keeps_innermost(%x: tensor<16x32x64xf32>) -> tensor<32x16x64xf32> {
  %e = tensor.empty() : tensor<32x16x64xf32>
  %t = linalg.transpose ins(%x : tensor<16x32x64xf32>) outs(%e : tensor<32x16x64xf32>) permutation = [1, 0, 2]
  return %t : tensor<32x16x64xf32>
}


// CHECK-LABEL: // -----// workload {{.*}} linalg.transpose
// CHECK-NEXT: // sketch gpu.transpose
// CHECK: // sketch gpu.elementwise
// DEFAULT: linalg.transpose (gpu.elementwise)
func.func @rgb(%x: tensor<2x3x64x64xf32>) -> tensor<2x64x64x3xf32> {
  %e = tensor.empty() : tensor<2x64x64x3xf32>
  %t = linalg.transpose ins(%x : tensor<2x3x64x64xf32>) outs(%e : tensor<2x64x64x3xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<2x64x64x3xf32>
}

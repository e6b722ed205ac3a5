// RUN: ke-opt %s --ke-gpu-merge-modules | FileCheck %s

// Two outlined launches (a global reduction's partial sums and its combine)
// become one gpu.module, one binary. Their kernels share a name, so the
// second takes its old module's name and its launch follows.
// CHECK: gpu.module @kernel_kernel {
// CHECK: gpu.func @kernel_kernel(
// CHECK: gpu.func @kernel_kernel_0(
// CHECK-NOT: gpu.module
// CHECK: func.func @kernel
// CHECK: gpu.launch_func @kernel_kernel::@kernel_kernel
// CHECK: gpu.launch_func @kernel_kernel::@kernel_kernel_0
module attributes {gpu.container_module} {
  gpu.module @kernel_kernel {
    gpu.func @kernel_kernel(%buf: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @kernel_kernel_0 {
    gpu.func @kernel_kernel(%buf: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @kernel(%buf: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernel_kernel::@kernel_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    gpu.launch_func @kernel_kernel_0::@kernel_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    return
  }
}

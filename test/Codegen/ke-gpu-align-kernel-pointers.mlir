// RUN: ke-opt %s --ke-gpu-align-kernel-pointers | FileCheck %s

// Every generic or global pointer parameter of a kernel is 16-byte aligned;
// the ones the kernel only loads through are also noalias (kernel buffers
// do not overlap). Other parameters, and functions that are not kernels,
// are left alone.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: llvm.func @k(
    // CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 16 : i64, llvm.noalias},
    // CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 16 : i64},
    // CHECK-SAME: %{{.*}}: !llvm.ptr<3>,
    // CHECK-SAME: %{{.*}}: i64)
    llvm.func @k(%in: !llvm.ptr, %out: !llvm.ptr, %shared: !llvm.ptr<3>, %n: i64)
        attributes {gpu.kernel, nvvm.kernel} {
      %v = llvm.load %in : !llvm.ptr -> f32
      llvm.store %v, %out : f32, !llvm.ptr
      llvm.store %v, %shared : f32, !llvm.ptr<3>
      llvm.return
    }
    // CHECK-LABEL: llvm.func @helper(
    // CHECK-SAME: %{{.*}}: !llvm.ptr)
    llvm.func @helper(%p: !llvm.ptr) {
      llvm.return
    }
  }
}

// RUN: ke-opt %s --ke-gpu-hoist-barriers --split-input-file | FileCheck %s

// A streaming loop (global loads and stores only) waits for no one: its
// barrier leaves the loop, and one barrier after the loop keeps the order
// with what follows.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @streaming
    // CHECK: scf.for
    // CHECK-NOT: gpu.barrier
    // CHECK: memref.store
    // CHECK-NEXT: }
    // CHECK-NEXT: gpu.barrier
    // CHECK-NEXT: gpu.return
    gpu.func @streaming(%in: memref<64xf32>, %out: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      scf.for %i = %c0 to %c64 step %c1 {
        %v = memref.load %in[%i] : memref<64xf32>
        gpu.barrier
        memref.store %v, %out[%i] : memref<64xf32>
        gpu.barrier
      }
      gpu.return
    }
  }
}

// -----

// A loop that writes workgroup memory exchanges data between threads
// through it: its barriers stay where they are.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @shared
    // CHECK: scf.for
    // CHECK: memref.store
    // CHECK-NEXT: gpu.barrier
    // CHECK: memref.load
    // CHECK: memref.store
    // CHECK-NEXT: gpu.barrier
    // CHECK-NEXT: }
    // CHECK-NEXT: gpu.return
    gpu.func @shared(%in: memref<64xf32>, %out: memref<64xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %t = gpu.thread_id x
      scf.for %i = %c0 to %c64 step %c1 {
        %v = memref.load %in[%i] : memref<64xf32>
        memref.store %v, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %w = memref.load %tile[%i] : memref<64xf32, #gpu.address_space<workgroup>>
        memref.store %w, %out[%i] : memref<64xf32>
        gpu.barrier
      }
      gpu.return
    }
  }
}

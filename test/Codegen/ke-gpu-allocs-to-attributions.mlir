// RUN: ke-opt %s --ke-gpu-allocs-to-attributions --split-input-file --verify-diagnostics | FileCheck %s

// Workgroup allocations become workgroup attributions (shared memory), the
// others private attributions (per-thread registers or local memory), each
// aligned to 16 bytes (one 128-bit access); their deallocs go.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @tiles
    // CHECK-SAME: workgroup(%[[TILE:.*]] : memref<64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
    // CHECK-SAME: private(%[[ACC:.*]] : memref<4xf32> {llvm.align = 16 : i64})
    // CHECK-NOT: memref.alloc
    // CHECK-NOT: memref.dealloc
    // CHECK: memref.store %{{.*}}, %[[TILE]]
    // CHECK: memref.store %{{.*}}, %[[ACC]]
    gpu.func @tiles(%in: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %tile = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
      %acc = memref.alloc() : memref<4xf32>
      %v = memref.load %in[%c0] : memref<64xf32>
      memref.store %v, %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %v, %acc[%c0] : memref<4xf32>
      memref.dealloc %acc : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// A kernel cannot allocate a buffer of dynamic shape.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @dynamic(%n: index) kernel {
      // expected-error@+1 {{a kernel allocates a buffer of dynamic shape 'memref<?xf32>'}}
      %buf = memref.alloc(%n) : memref<?xf32>
      gpu.return
    }
  }
}


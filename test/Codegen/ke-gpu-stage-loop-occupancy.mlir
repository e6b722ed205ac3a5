// RUN: ke-opt %s --ke-gpu-stage-loop-occupancy --split-input-file | FileCheck %s

// A 256-thread kernel with a stage loop (global reads ahead of a barrier,
// only shared memory written in the loop) is bounded to two blocks per SM:
// 128 registers per thread.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @stage_loop
    // CHECK-SAME: nvvm.minctasm = 2 : i32
    gpu.func @stage_loop(%a: memref<64x64xf32>, %c: memref<64xf32>)
        workgroup(%tile: memref<16x64xf32, #gpu.address_space<workgroup>>)
        kernel attributes {known_block_size = array<i32: 16, 16, 1>} {
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : index
      %c64 = arith.constant 64 : index
      %pad = arith.constant 0.0 : f32
      %init = arith.constant dense<0.0> : vector<4xf32>
      %acc = scf.for %k = %c0 to %c64 step %c16 iter_args(%sum = %init) -> (vector<4xf32>) {
        %v = vector.transfer_read %a[%k, %c0], %pad {in_bounds = [true]} : memref<64x64xf32>, vector<4xf32>
        vector.transfer_write %v, %tile[%c0, %c0] {in_bounds = [true]} : vector<4xf32>, memref<16x64xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %s = vector.transfer_read %tile[%c0, %c0], %pad {in_bounds = [true]} : memref<16x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %n = arith.addf %sum, %s : vector<4xf32>
        gpu.barrier
        scf.yield %n : vector<4xf32>
      }
      vector.transfer_write %acc, %c[%c0] {in_bounds = [true]} : vector<4xf32>, memref<64xf32>
      gpu.return
    }
  }
}

// -----

// 1024 threads: two blocks would leave 32 registers per thread.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @big_block
    // CHECK-NOT: nvvm.minctasm
    gpu.func @big_block(%a: memref<64x64xf32>, %c: memref<64xf32>)
        workgroup(%tile: memref<16x64xf32, #gpu.address_space<workgroup>>)
        kernel attributes {known_block_size = array<i32: 32, 32, 1>} {
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : index
      %c64 = arith.constant 64 : index
      %pad = arith.constant 0.0 : f32
      scf.for %k = %c0 to %c64 step %c16 {
        %v = vector.transfer_read %a[%k, %c0], %pad {in_bounds = [true]} : memref<64x64xf32>, vector<4xf32>
        vector.transfer_write %v, %tile[%c0, %c0] {in_bounds = [true]} : vector<4xf32>, memref<16x64xf32, #gpu.address_space<workgroup>>
        gpu.barrier
      }
      gpu.return
    }
  }
}

// -----

// A loop that writes global memory (its accumulator tile not hoisted, or a
// row loop storing results) is not a stage loop.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @writes_global
    // CHECK-NOT: nvvm.minctasm
    gpu.func @writes_global(%a: memref<64x64xf32>, %c: memref<64xf32>)
        workgroup(%tile: memref<16x64xf32, #gpu.address_space<workgroup>>)
        kernel attributes {known_block_size = array<i32: 16, 16, 1>} {
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : index
      %c64 = arith.constant 64 : index
      %pad = arith.constant 0.0 : f32
      scf.for %k = %c0 to %c64 step %c16 {
        %v = vector.transfer_read %a[%k, %c0], %pad {in_bounds = [true]} : memref<64x64xf32>, vector<4xf32>
        vector.transfer_write %v, %tile[%c0, %c0] {in_bounds = [true]} : vector<4xf32>, memref<16x64xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        vector.transfer_write %v, %c[%k] {in_bounds = [true]} : vector<4xf32>, memref<64xf32>
      }
      gpu.return
    }
  }
}

// -----

// No barrier in the loop: a streaming loop, not a stage loop.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @no_barrier
    // CHECK-NOT: nvvm.minctasm
    gpu.func @no_barrier(%a: memref<64x64xf32>, %c: memref<64xf32>)
        workgroup(%tile: memref<16x64xf32, #gpu.address_space<workgroup>>)
        kernel attributes {known_block_size = array<i32: 16, 16, 1>} {
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : index
      %c64 = arith.constant 64 : index
      %pad = arith.constant 0.0 : f32
      scf.for %k = %c0 to %c64 step %c16 {
        %v = vector.transfer_read %a[%k, %c0], %pad {in_bounds = [true]} : memref<64x64xf32>, vector<4xf32>
        vector.transfer_write %v, %tile[%c0, %c0] {in_bounds = [true]} : vector<4xf32>, memref<16x64xf32, #gpu.address_space<workgroup>>
      }
      gpu.return
    }
  }
}

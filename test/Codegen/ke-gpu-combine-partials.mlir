// RUN: ke-opt %s --ke-gpu-combine-partials --split-input-file | FileCheck %s

// Two rows of 64 partials in shared memory, each summed by the thread that
// owns the row: every thread instead reduces its element of each row with
// the whole block (gpu.all_reduce, before the guard), and the owner picks
// its row's result.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @rows
    // CHECK: gpu.thread_id x
    // CHECK: arith.cmpi ult
    // CHECK: %[[TID:.*]] = gpu.thread_id x
    // CHECK: %[[A:.*]] = memref.load %{{.*}}[%{{.*}}, %[[TID]]]
    // CHECK: %[[RA:.*]] = gpu.all_reduce add %[[A]] uniform
    // CHECK: %[[B:.*]] = memref.load %{{.*}}[%{{.*}}, %[[TID]]]
    // CHECK: %[[RB:.*]] = gpu.all_reduce add %[[B]] uniform
    // CHECK: scf.if
    // CHECK: arith.select %{{.*}}, %[[RB]], %[[RA]]
    // CHECK-NOT: vector.reduction
    // CHECK: memref.store
    gpu.func @rows(%out: memref<2xf32>)
        workgroup(%shared: memref<2x64xf32, #gpu.address_space<workgroup>>)
        kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %tid = gpu.thread_id x
      %owner = arith.cmpi ult, %tid, %c2 : index
      scf.if %owner {
        %row = vector.load %shared[%tid, %c0] : memref<2x64xf32, #gpu.address_space<workgroup>>, vector<64xf32>
        %s = vector.reduction <add>, %row : vector<64xf32> into f32
        memref.store %s, %out[%tid] : memref<2xf32>
      }
      gpu.return
    }
  }
}

// -----

// Without a known [T, 1, 1] block the combine is left alone.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @unknown_block
    // CHECK-NOT: gpu.all_reduce
    // CHECK: vector.reduction <add>
    gpu.func @unknown_block(%out: memref<2xf32>)
        workgroup(%shared: memref<2x64xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %tid = gpu.thread_id x
      %owner = arith.cmpi ult, %tid, %c2 : index
      scf.if %owner {
        %row = vector.load %shared[%tid, %c0] : memref<2x64xf32, #gpu.address_space<workgroup>>, vector<64xf32>
        %s = vector.reduction <add>, %row : vector<64xf32> into f32
        memref.store %s, %out[%tid] : memref<2xf32>
      }
      gpu.return
    }
  }
}

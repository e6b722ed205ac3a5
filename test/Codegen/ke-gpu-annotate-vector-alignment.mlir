// RUN: ke-opt %s --ke-gpu-annotate-vector-alignment | FileCheck %s

// Kernel buffers are 16-byte aligned: a vector access whose element offset
// is provably a multiple of 4 f32 elements gets alignment 16; one at an
// offset only known to be odd keeps element alignment (no attribute). So
// does an access to a buffer that is not a kernel argument. A remainder
// of a multiple of 4 by 56 is a multiple of 4; by 7 it is not known to be.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @k
    // CHECK: vector.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
    // CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<64xf32>, vector<4xf32>
    // CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<4xf32, 5>, vector<4xf32>
    // CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
    // CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<64xf32>, vector<4xf32>
    gpu.func @k(%in: memref<64xf32>, %out: memref<64xf32>)
        private(%tmp: memref<4xf32, 5>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      %i = arith.muli %t, %c4 : index
      %v = vector.load %in[%i] : memref<64xf32>, vector<4xf32>
      %j = arith.addi %i, %c1 : index
      vector.store %v, %out[%j] : memref<64xf32>, vector<4xf32>
      vector.store %v, %tmp[%c0] : memref<4xf32, 5>, vector<4xf32>
      %c56 = arith.constant 56 : index
      %c7 = arith.constant 7 : index
      %r56 = arith.remui %i, %c56 : index
      vector.store %v, %out[%r56] : memref<64xf32>, vector<4xf32>
      %r7 = arith.remui %i, %c7 : index
      vector.store %v, %out[%r7] : memref<64xf32>, vector<4xf32>
      gpu.return
    }
  }
}

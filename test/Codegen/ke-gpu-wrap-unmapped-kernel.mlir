// RUN: ke-opt %s --ke-gpu-wrap-unmapped-kernel --split-input-file | FileCheck %s

// A kernel whose schedule made no launch (a 0-d result) runs its body in
// one launch of one block of one thread; the return stays on the host.
// CHECK-LABEL: func.func @kernel
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
// CHECK: memref.load
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK: return
func.func @kernel(%in: memref<f32>, %out: memref<f32>) {
  %v = memref.load %in[] : memref<f32>
  memref.store %v, %out[] : memref<f32>
  return
}

// -----

// A kernel with a launch, and any other function, are left alone.
// CHECK-LABEL: func.func @kernel
// CHECK-COUNT-1: gpu.launch
// CHECK-LABEL: func.func @helper
// CHECK-NOT: gpu.launch
func.func @kernel(%out: memref<f32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}
func.func @helper(%in: memref<f32>, %out: memref<f32>) {
  %v = memref.load %in[] : memref<f32>
  memref.store %v, %out[] : memref<f32>
  return
}

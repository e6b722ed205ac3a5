// RUN: ke-opt %s --ke-scalarize-bool-transfers | FileCheck %s

// Bool buffers hold a byte per element; a vector<4xi1> access would read or
// write the bits of one byte. Each element is loaded or stored on its own.
// CHECK-LABEL: func.func @bool_copy
// CHECK-SAME: (%[[IN:.*]]: memref<8xi1>, %[[OUT:.*]]: memref<8xi1>, %[[I:.*]]: index)
// CHECK-NOT: vector.transfer_read
// CHECK: %[[E0:.*]] = memref.load %[[IN]][%[[I]]] : memref<8xi1>
// CHECK: %[[I1:.*]] = arith.addi %[[I]], %c1
// CHECK: %[[E1:.*]] = memref.load %[[IN]][%[[I1]]] : memref<8xi1>
// CHECK-COUNT-2: memref.load %[[IN]]
// CHECK: memref.store %[[E0]], %[[OUT]][%[[I]]] : memref<8xi1>
// CHECK: memref.store %[[E1]], %[[OUT]]
// CHECK-COUNT-2: memref.store
// CHECK-NOT: vector.transfer_write
func.func @bool_copy(%in: memref<8xi1>, %out: memref<8xi1>, %i: index) {
  %pad = arith.constant false
  %v = vector.transfer_read %in[%i], %pad {in_bounds = [true]} : memref<8xi1>, vector<4xi1>
  vector.transfer_write %v, %out[%i] {in_bounds = [true]} : vector<4xi1>, memref<8xi1>
  return
}

// A read that may run past the end checks each element's index.
// CHECK-LABEL: func.func @bool_partial
// CHECK: memref.dim
// CHECK: arith.cmpi slt
// CHECK: scf.if
// CHECK: memref.load
// CHECK: else
// CHECK: scf.yield %false
func.func @bool_partial(%in: memref<?xi1>, %i: index) -> vector<2xi1> {
  %pad = arith.constant false
  %v = vector.transfer_read %in[%i], %pad : memref<?xi1>, vector<2xi1>
  return %v : vector<2xi1>
}

// vector.load and vector.store (the GPU lowering's form) too; other
// element types are left alone.
// CHECK-LABEL: func.func @bool_load_store
// CHECK-COUNT-2: memref.load %{{.*}} : memref<4x8xi1>
// CHECK-COUNT-2: memref.store %{{.*}} : memref<4x8xi1>
// CHECK: vector.load %{{.*}} : memref<8xf32>, vector<2xf32>
func.func @bool_load_store(%m: memref<4x8xi1>, %f: memref<8xf32>, %i: index) -> vector<2xf32> {
  %v = vector.load %m[%i, %i] : memref<4x8xi1>, vector<2xi1>
  vector.store %v, %m[%i, %i] : memref<4x8xi1>, vector<2xi1>
  %w = vector.load %f[%i] : memref<8xf32>, vector<2xf32>
  return %w : vector<2xf32>
}

// The cpu.softmax sketch: decompose, then rows across threads, then pieces
// of `vec` elements of a row.
// RUN: ke-opt sketches %s --target cpu:a64fx | FileCheck %s
// CHECK-LABEL: // -----// workload {{.*}} linalg.softmax
// CHECK-NEXT: // sketch cpu.softmax
// CHECK-NEXT: // knob threads: 1 2 4 8 16 32 [48]
// CHECK-NEXT: // knob forall.d0: 1 2 3 4 6 8 {{.*}} 192 [256] 384
// CHECK-NEXT: // knob vec: 4 8 [16] 32 64
// CHECK: transform.structured.decompose_interface
// CHECK: transform.structured.match ops{["linalg.generic"]}
// CHECK: transform.foreach
// CHECK: tile_using_forall %part tile_sizes [256]
// CHECK: tile_using_for %rows tile_sizes [1, 16]
// CHECK: transform.structured.match ops{["linalg.fill"]}
// CHECK: transform.foreach
// CHECK: tile_using_forall %part tile_sizes [256]
// CHECK: tile_using_for %rows tile_sizes [1]
// CHECK: vectorize_children_and_apply_patterns
func.func @softmax(%x: tensor<12288x256xf32>, %o: tensor<12288x256xf32>) -> tensor<12288x256xf32> {
  %r = linalg.softmax dimension(1) ins(%x : tensor<12288x256xf32>) outs(%o : tensor<12288x256xf32>) -> tensor<12288x256xf32>
  return %r : tensor<12288x256xf32>
}

// The softmax dimension must be the last one; otherwise cpu.tile does not
// apply either (softmax is not a structured op) and nothing matches.
// CHECK-LABEL: // -----// workload {{.*}} linalg.softmax
// CHECK-NEXT: // no sketch rule applies
func.func @softmax_dim0(%x: tensor<16x8xf32>, %o: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %r = linalg.softmax dimension(0) ins(%x : tensor<16x8xf32>) outs(%o : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

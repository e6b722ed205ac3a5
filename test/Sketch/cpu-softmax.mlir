// The cpu.softmax sketch: decompose; the divide's rows across threads with
// the other parts fused into that loop (a thread's intermediates are its
// rows); then one row at a time: the elementwise parts in pieces of `vec`
// elements, the max and the sum carrying `vec` partial results across the
// row (tile_reduction_using_for).
// RUN: ke-opt sketches %s --target cpu:a64fx | FileCheck %s
// CHECK-LABEL: // -----// workload {{.*}} linalg.softmax
// CHECK-NEXT: // sketch cpu.softmax
// CHECK-NEXT: // knob threads: 1 2 4 8 16 32 [48]
// CHECK-NEXT: // knob forall.d0: 1 2 3 4 6 8 {{.*}} 96 [128] 192 256 384
// CHECK-NEXT: // knob vec: 4 8 [16] 32 64
// CHECK: transform.structured.decompose_interface
// CHECK: %[[FUNC:.*]] = transform.structured.match ops{["func.func"]}
// CHECK: transform.apply_registered_pass "ke-fresh-unread-inits" to %[[FUNC]]
// CHECK: %[[RED:.*]] = transform.structured.match ops{["linalg.generic"]} attributes {iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]}
// CHECK: %[[MAX:.*]], %[[SUM:.*]] = transform.split_handle %[[RED]]
// CHECK: %[[EW:.*]] = transform.structured.match ops{["linalg.generic"]} attributes {iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]}
// CHECK: %[[EXP:.*]], %[[DIV:.*]] = transform.split_handle %[[EW]]
// CHECK: %[[FILLS:.*]] = transform.structured.match ops{["linalg.fill"]}
// CHECK: %[[FMAX:.*]], %[[FSUM:.*]] = transform.split_handle %[[FILLS]]
// CHECK: %[[DIVT:.*]], %[[F0:.*]] = transform.structured.tile_using_forall %[[DIV]] tile_sizes [128]
// CHECK: %[[SUMF:.*]], %[[F1:.*]] = transform.structured.fuse_into_containing_op %[[SUM]] into %[[F0]]
// CHECK: %[[FSUMF:.*]], %[[F2:.*]] = transform.structured.fuse_into_containing_op %[[FSUM]] into %[[F1]]
// CHECK: %[[EXPF:.*]], %[[F3:.*]] = transform.structured.fuse_into_containing_op %[[EXP]] into %[[F2]]
// CHECK: %[[MAXF:.*]], %[[F4:.*]] = transform.structured.fuse_into_containing_op %[[MAX]] into %[[F3]]
// CHECK: %[[FMAXF:.*]], %{{.*}} = transform.structured.fuse_into_containing_op %[[FMAX]] into %[[F4]]
// CHECK: tile_using_for %[[DIVT]] tile_sizes [1, 16]
// CHECK: tile_using_for %[[EXPF]] tile_sizes [1, 16]
// CHECK: %[[ROW:.*]], %{{.*}} = transform.structured.tile_using_for %[[SUMF]] tile_sizes [1, 0]
// CHECK: tile_reduction_using_for %[[ROW]] by tile_sizes = [0, 16]
// CHECK: %[[ROW2:.*]], %{{.*}} = transform.structured.tile_using_for %[[MAXF]] tile_sizes [1, 0]
// CHECK: tile_reduction_using_for %[[ROW2]] by tile_sizes = [0, 16]
// CHECK: tile_using_for %[[FSUMF]] tile_sizes [1]
// CHECK: tile_using_for %[[FMAXF]] tile_sizes [1]
// CHECK: vectorize_children_and_apply_patterns
// CHECK: transform.apply_patterns.tensor.fold_tensor_empty
func.func @softmax(%x: tensor<12288x256xf32>, %o: tensor<12288x256xf32>) -> tensor<12288x256xf32> {
  %r = linalg.softmax dimension(1) ins(%x : tensor<12288x256xf32>) outs(%o : tensor<12288x256xf32>) -> tensor<12288x256xf32>
  return %r : tensor<12288x256xf32>
}

// By default a block's rows, exponentials and results fit in half of a
// core's share of L2 (8 MiB for 12 cores: 341 KiB; 3 x 16 KiB a row here,
// 3 KiB above), not a thread's whole share of rows.
// CHECK-LABEL: // -----// workload {{.*}} linalg.softmax
// CHECK-NEXT: // sketch cpu.softmax
// CHECK-NEXT: // knob threads: 1 2 4 8 16 32 [48]
// CHECK-NEXT: // knob forall.d0: 1 2 4 [8] 16 32 64 128 256 512 1024 2048 4096
func.func @softmax_long_rows(%x: tensor<4096x4096xf32>, %o: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %r = linalg.softmax dimension(1) ins(%x : tensor<4096x4096xf32>) outs(%o : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %r : tensor<4096x4096xf32>
}

// The softmax dimension must be the last one; otherwise cpu.tile does not
// apply either (softmax is not a structured op) and only cpu.loops, the
// reference's own loops, matches.
// CHECK-LABEL: // -----// workload {{.*}} linalg.softmax
// CHECK-NEXT: // sketch cpu.loops
// CHECK-NEXT: module
// CHECK: transform.structured.decompose_interface
// CHECK-NOT: // sketch
func.func @softmax_dim0(%x: tensor<16x8xf32>, %o: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %r = linalg.softmax dimension(0) ins(%x : tensor<16x8xf32>) outs(%o : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

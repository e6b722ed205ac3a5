// The cpu.rows sketch: on CPU targets an elementwise op and the row
// reductions it reads (log-softmax's maximum and sum) are one kernel group;
// the elementwise op's blocks of rows go across threads with every
// reduction and fill fused into that loop, the last first; then one row at
// a time, `vec` elements at once, the reductions carrying `vec` partial
// results across the row (tile_reduction_using_for); what the elementwise
// op computes from a row's reductions alone is hoisted out of the row's
// loop (apply_licm).
// RUN: ke-opt sketches %s --target cpu:a64fx | FileCheck %s

// CHECK-LABEL: // -----// workload {{.*}} linalg.fill
// CHECK-NEXT: // fused into workload [[GROUP:[0-9a-f]+]]
// CHECK: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // fused into workload [[GROUP]]
// CHECK: // -----// workload [[GROUP]] linalg.generic
// CHECK-NEXT: // sketch cpu.rows
// CHECK-NEXT: // knob threads: 1 2 4 8 16 32 [48]
// CHECK-NEXT: // knob forall.d0: 1 2 3 4 6 8 {{.*}} 128 [192] 256 384
// CHECK-NEXT: // knob vec: 4 8 [16] 32 64
// CHECK: %[[RED:.*]] = transform.structured.match ops{["linalg.generic"]} attributes {iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]}
// CHECK: %[[MAX:.*]], %[[SUM:.*]] = transform.split_handle %[[RED]]
// CHECK: %[[FILLS:.*]] = transform.structured.match ops{["linalg.fill"]}
// CHECK: %[[FMAX:.*]], %[[FSUM:.*]] = transform.split_handle %[[FILLS]]
// CHECK: %[[ANCHOR:.*]] = transform.structured.match attributes {ke.anchor}
// CHECK: %[[OUT:.*]], %[[F0:.*]] = transform.structured.tile_using_forall %[[ANCHOR]] tile_sizes [192]
// CHECK: %[[SUMF:.*]], %[[F1:.*]] = transform.structured.fuse_into_containing_op %[[SUM]] into %[[F0]]
// CHECK: %[[FSUMF:.*]], %[[F2:.*]] = transform.structured.fuse_into_containing_op %[[FSUM]] into %[[F1]]
// CHECK: %[[MAXF:.*]], %[[F3:.*]] = transform.structured.fuse_into_containing_op %[[MAX]] into %[[F2]]
// CHECK: %[[FMAXF:.*]], %{{.*}} = transform.structured.fuse_into_containing_op %[[FMAX]] into %[[F3]]
// CHECK: tile_using_for %[[OUT]] tile_sizes [1, 16]
// CHECK: tile_using_for %[[FMAXF]] tile_sizes [1]
// CHECK: %[[ROW:.*]], %{{.*}} = transform.structured.tile_using_for %[[MAXF]] tile_sizes [1, 0]
// CHECK: tile_reduction_using_for %[[ROW]] by tile_sizes = [0, 16]
// CHECK: tile_using_for %[[FSUMF]] tile_sizes [1]
// CHECK: %[[ROW2:.*]], %{{.*}} = transform.structured.tile_using_for %[[SUMF]] tile_sizes [1, 0]
// CHECK: tile_reduction_using_for %[[ROW2]] by tile_sizes = [0, 16]
// CHECK: vectorize_children_and_apply_patterns
// CHECK: %[[LOOPS:.*]] = transform.structured.match ops{["scf.for"]} in %root
// CHECK: transform.apply_licm to %[[LOOPS]]
func.func @log_softmax(%x: tensor<12288x256xf32>) -> tensor<12288x256xf32> {
  %ninf = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12288x256xf32>
  %er = tensor.empty() : tensor<12288xf32>
  %mxi = linalg.fill ins(%ninf : f32) outs(%er : tensor<12288xf32>) -> tensor<12288xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<12288x256xf32>) outs(%mxi : tensor<12288xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %m = arith.maximumf %v, %acc : f32
      linalg.yield %m : f32
  } -> tensor<12288xf32>
  %sei = linalg.fill ins(%zero : f32) outs(%er : tensor<12288xf32>) -> tensor<12288xf32>
  %se = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mx : tensor<12288x256xf32>, tensor<12288xf32>) outs(%sei : tensor<12288xf32>) {
    ^bb0(%v: f32, %p: f32, %acc: f32):
      %d = arith.subf %v, %p : f32
      %x1 = math.exp %d : f32
      %s = arith.addf %x1, %acc : f32
      linalg.yield %s : f32
  } -> tensor<12288xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mx, %se : tensor<12288x256xf32>, tensor<12288xf32>, tensor<12288xf32>) outs(%e : tensor<12288x256xf32>) {
    ^bb0(%v: f32, %r0: f32, %r1: f32, %o: f32):
      %d = arith.subf %v, %r0 : f32
      %l = math.log %r1 : f32
      %y = arith.subf %d, %l : f32
      linalg.yield %y : f32
  } -> tensor<12288x256xf32>
  return %r : tensor<12288x256xf32>
}

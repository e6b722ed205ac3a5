// cpu.tile on a plain reduction along its innermost loop carries a vector
// of partial results along the loop (tile_reduction_using_for) and reduces
// across lanes once after it, when the inner tile times the rows' register
// tile holds at least 16 partial results; with fewer it reduces lane by
// lane every step, a loop LLVM vectorizes itself. Peeled partial tiles are
// folded to constant sizes before vectorizing (or they stay scalar).
// RUN: ke-opt sketches %s --target cpu:a64fx | FileCheck %s
// RUN: ke-opt sketches %s --target cpu:a64fx --knobs reg.d0=1,kvec.d1=4 | FileCheck %s --check-prefix=FEW

// CHECK-LABEL: // -----// workload {{.*}} linalg.reduce
// CHECK: // sketch cpu.tile: {{.*}}reg.d0=16 kvec.d1=16
// CHECK: tile_using_for %{{.*}} tile_sizes [16, 0]
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %[[LOOP:.*]] = transform.structured.tile_reduction_using_for %{{.*}} by tile_sizes = [0, 16]
// CHECK-NEXT: %[[TYPED:.*]] = transform.cast %[[LOOP]] : !transform.any_op to !transform.op<"scf.for">
// CHECK-NEXT: transform.loop.peel %[[TYPED]]
// CHECK: transform.apply_patterns.canonicalization
// CHECK: vectorize_children_and_apply_patterns
// FEW-LABEL: // -----// workload {{.*}} linalg.reduce
// FEW-NOT: tile_reduction_using_for
// FEW: tile_using_for %{{.*}} tile_sizes [0, 4]
func.func @row_max(%x: tensor<32x1001xf32>, %o: tensor<32xf32>) -> tensor<32xf32> {
  %r = linalg.reduce ins(%x : tensor<32x1001xf32>) outs(%o : tensor<32xf32>) dimensions = [1]
    (%v: f32, %acc: f32) {
      %m = arith.maximumf %v, %acc : f32
      linalg.yield %m : f32
    }
  return %r : tensor<32xf32>
}

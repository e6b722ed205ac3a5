// gpu.softmax, f64 rows that do not split over a warp (the row kernel takes
// rows of at most 32 bits): rows to blocks, one row per thread, the softmax
// decomposed inside the thread and its parts tiled by `vec` elements of the
// row.
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.softmax | FileCheck %s
// RUN: ke-opt sketches %s --target cuda:sm_90 --sketch gpu.softmax --knobs rows=4,vec=5 | FileCheck %s --check-prefix=KNOBS

// CHECK-LABEL: // -----// workload {{.*}} linalg.softmax
// CHECK-NEXT: // sketch gpu.softmax
// CHECK-NEXT: // knob rows:
// CHECK-NEXT: // knob vec:
// CHECK: tile_using_forall %{{.*}} tile_sizes [{{[0-9]+}}, 0] (mapping = [#gpu.block<x>])
// CHECK: tile_using_forall %{{.*}} tile_sizes [1, 0] (mapping = [#gpu.thread<x>])
// CHECK: transform.structured.decompose_interface
// CHECK: tile_using_for %part tile_sizes [0, {{[0-9]+}}]

// KNOBS: tile_sizes [4, 0] (mapping = [#gpu.block<x>])
// KNOBS: tile_using_for %part tile_sizes [0, 5]
// KNOBS: block_dims = [4, 1, 1]
func.func @softmax(%x: tensor<64x100xf64>) -> tensor<64x100xf64> {
  %e = tensor.empty() : tensor<64x100xf64>
  %r = linalg.softmax dimension(1) ins(%x : tensor<64x100xf64>) outs(%e : tensor<64x100xf64>) -> tensor<64x100xf64>
  return %r : tensor<64x100xf64>
}

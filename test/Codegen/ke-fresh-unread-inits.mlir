// RUN: ke-opt %s --split-input-file --ke-fresh-unread-inits | FileCheck %s

// A decomposed softmax's shape: the exponentials and the divide both write
// into %out. The exponentials overwrite it without reading it, so they get
// a tensor.empty of their own; the divide, the last writer, keeps %out.

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @shared_destination
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xf32>, %[[S:.*]]: tensor<4xf32>, %[[OUT:.*]]: tensor<4x8xf32>
// CHECK:         %[[FRESH:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:         %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>) outs(%[[FRESH]] : tensor<4x8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[EXP]], %[[S]] : tensor<4x8xf32>, tensor<4xf32>) outs(%[[OUT]] : tensor<4x8xf32>)
func.func @shared_destination(%x: tensor<4x8xf32>, %s: tensor<4xf32>,
                              %out: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%out : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id, #row, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<4x8xf32>, tensor<4xf32>) outs(%out : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

// An earlier writer that reads its init (it accumulates into it) keeps it:
// its result depends on the init's values.

#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @reads_its_init
// CHECK-NOT:     tensor.empty
// CHECK:         outs(%[[OUT:.*]] : tensor<4x8xf32>)
// CHECK:         outs(%[[OUT]] : tensor<4x8xf32>)
func.func @reads_its_init(%x: tensor<4x8xf32>, %out: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%out : tensor<4x8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%out : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A single writer and a reduction (not all loops parallel: it does not
// write every element once) keep their inits.

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @single_writer_and_reduction
// CHECK-NOT:     tensor.empty
func.func @single_writer_and_reduction(%x: tensor<4x8xf32>, %out: tensor<4x8xf32>,
                                       %acc: tensor<4xf32>)
    -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%out : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#id, #row],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#id, #row],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %v, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %a, %m, %n : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>
}

// RUN: ke-opt %s --ke-gpu-reference-split-reductions --split-input-file | FileCheck %s

// Softmax-like row sums: 64 rows of 8192. 64 slices (262144 / 64 threads
// would allow 4096, but each row's thread then sums the partials: at most
// sqrt(8192) of them), the slice index the last, parallel loop of the
// partials; then the partials are summed into the original init.
// CHECK-LABEL: func.func @kernel
// CHECK: %[[X:.*]] = bufferization.to_tensor %arg0
// CHECK: %[[INIT:.*]] = bufferization.to_tensor %arg1
// CHECK: %[[SLICES:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [64, 128, 64]
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<64x64xf32>
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[SLICES]] : tensor<64x128x64xf32>) outs(%[[ZERO]] : tensor<64x64xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PARTIAL]] : tensor<64x64xf32>) outs(%[[INIT]] : tensor<64xf32>)
#row = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @kernel(%a: memref<64x8192xf32>, %b: memref<64xf32>) {
  %x = bufferization.to_tensor %a restrict : memref<64x8192xf32> to tensor<64x8192xf32>
  %init = bufferization.to_tensor %b restrict writable : memref<64xf32> to tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x8192xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  bufferization.materialize_in_destination %r in restrict writable %b : (tensor<64xf32>, memref<64xf32>) -> ()
  return
}

// -----

// Left whole: many outputs (65536 rows), a short row (1024), and a
// two-result argmax whose combiner upstream does not match.
// CHECK-LABEL: func.func @kernel
// CHECK-NOT: tensor.expand_shape
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
#row = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @kernel(%a: memref<65536x8192xf32>, %b: memref<65536xf32>, %c: memref<64x1024xf32>, %d: memref<64xf32>, %e: memref<64x8192xf32>, %f: memref<64xf32>, %g: memref<64xi64>) {
  %x = bufferization.to_tensor %a restrict : memref<65536x8192xf32> to tensor<65536x8192xf32>
  %init = bufferization.to_tensor %b restrict writable : memref<65536xf32> to tensor<65536xf32>
  %r = linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<65536x8192xf32>) outs(%init : tensor<65536xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<65536xf32>
  %y = bufferization.to_tensor %c restrict : memref<64x1024xf32> to tensor<64x1024xf32>
  %init2 = bufferization.to_tensor %d restrict writable : memref<64xf32> to tensor<64xf32>
  %r2 = linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<64x1024xf32>) outs(%init2 : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %z = bufferization.to_tensor %e restrict : memref<64x8192xf32> to tensor<64x8192xf32>
  %max = bufferization.to_tensor %f restrict writable : memref<64xf32> to tensor<64xf32>
  %idx = bufferization.to_tensor %g restrict writable : memref<64xi64> to tensor<64xi64>
  %r3:2 = linalg.generic {indexing_maps = [#row, #out, #out], iterator_types = ["parallel", "reduction"]} ins(%z : tensor<64x8192xf32>) outs(%max, %idx : tensor<64xf32>, tensor<64xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %gt = arith.cmpf ogt, %in, %m : f32
    %nm = arith.select %gt, %in, %m : f32
    %ni = arith.select %gt, %ki, %i : i64
    linalg.yield %nm, %ni : f32, i64
  } -> (tensor<64xf32>, tensor<64xi64>)
  bufferization.materialize_in_destination %r in restrict writable %b : (tensor<65536xf32>, memref<65536xf32>) -> ()
  bufferization.materialize_in_destination %r2 in restrict writable %d : (tensor<64xf32>, memref<64xf32>) -> ()
  bufferization.materialize_in_destination %r3#0 in restrict writable %f : (tensor<64xf32>, memref<64xf32>) -> ()
  bufferization.materialize_in_destination %r3#1 in restrict writable %g : (tensor<64xi64>, memref<64xi64>) -> ()
  return
}

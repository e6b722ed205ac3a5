// RUN: ke-opt %s --ke-fuse-elementwise-chains | FileCheck %s
// RUN: ke-opt workloads %s | FileCheck %s --check-prefix=WORKLOADS

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A GEMM and its tail (bias, ReLU, scale): the three generics become one,
// which reads the matmul through the identity map; the matmul is not
// touched.
// CHECK-LABEL: func.func @gemm_tail
// CHECK: %[[MM:.*]] = linalg.matmul
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[MM]], %{{.*}} : tensor<64x48xf32>, tensor<48xf32>)
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return

// The matmul takes the fused tail as its one elementwise consumer.
// WORKLOADS: "op":"linalg.matmul",{{.*}}"fusible":[{"role":"producer",{{.*}}},{"role":"consumer","result":0,"op":"linalg.generic"
func.func @gemm_tail(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>, %bias: tensor<48xf32>) -> tensor<64x48xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %two = arith.constant 2.000000e+00 : f32
  %e = tensor.empty() : tensor<64x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%f : tensor<64x48xf32>) -> tensor<64x48xf32>
  %0 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %bias : tensor<64x48xf32>, tensor<48xf32>) outs(%e : tensor<64x48xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s = arith.addf %in, %in_0 : f32
    linalg.yield %s : f32
  } -> tensor<64x48xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<64x48xf32>) outs(%e : tensor<64x48xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x48xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<64x48xf32>) outs(%e : tensor<64x48xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  } -> tensor<64x48xf32>
  return %2 : tensor<64x48xf32>
}

// Softmax's exp(x - max) has two readers (the row sum and the division):
// it is neither fused into the reduction nor duplicated into the division.
// CHECK-LABEL: func.func @shared_producer
// CHECK: %[[EXP:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[EXP]] : tensor<64x256xf32>)
// CHECK-SAME: outs(%{{.*}} : tensor<64xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[EXP]], %{{.*}} : tensor<64x256xf32>, tensor<64xf32>)
func.func @shared_producer(%x: tensor<64x256xf32>, %max: tensor<64xf32>, %init: tensor<64xf32>) -> tensor<64x256xf32> {
  %e = tensor.empty() : tensor<64x256xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<64x256xf32>, tensor<64xf32>) outs(%e : tensor<64x256xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %x1 = math.exp %d : f32
    linalg.yield %x1 : f32
  } -> tensor<64x256xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<64x256xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %div = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<64x256xf32>, tensor<64xf32>) outs(%e : tensor<64x256xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<64x256xf32>
  return %div : tensor<64x256xf32>
}

// An elementwise op feeding a reduction alone (x^2 of a variance) is not
// fused into it either: ke's reduction rules take the reduction as it is.
// CHECK-LABEL: func.func @into_reduction
// CHECK: arith.mulf
// CHECK: linalg.yield
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
func.func @into_reduction(%x: tensor<64x256xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64x256xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<64x256xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<64x256xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %sum : tensor<64xf32>
}

// Eval-mode BatchNorm's tail as torch-mlir writes it: subtract the mean,
// then two multiplies reading the same per-channel tensor. After the last
// two fuse, the fused op reads %scale once; the first must still join in
// (one round of the greedy driver left it out), so the chain is one op.
// CHECK-LABEL: func.func @shared_operand_chain
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<1x8x8x8xf32>, tensor<8x1x1xf32>, tensor<8x1x1xf32>)
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return
#nchw = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @shared_operand_chain(%x: tensor<1x8x8x8xf32>, %mean: tensor<8x1x1xf32>, %scale: tensor<8x1x1xf32>) -> tensor<1x8x8x8xf32> {
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %0 = linalg.generic {indexing_maps = [#nchw, #channel, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %mean : tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %s = arith.subf %in, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x8x8xf32>
  %1 = linalg.generic {indexing_maps = [#nchw, #channel, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %scale : tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %p = arith.mulf %in, %c : f32
    linalg.yield %p : f32
  } -> tensor<1x8x8x8xf32>
  %2 = linalg.generic {indexing_maps = [#nchw, #channel, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %scale : tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %p = arith.mulf %in, %c : f32
    linalg.yield %p : f32
  } -> tensor<1x8x8x8xf32>
  return %2 : tensor<1x8x8x8xf32>
}

// A matrix-vector product (torch.matmul of an MxK matrix and a Kx1 one) is
// a contraction with few outputs and a long reduction that both inputs read
// contiguously: gpu.reduce splits the reduction over a block's threads by
// default. A matrix product, or a long reduction read with a stride, is
// not taken: gpu.ffma and gpu.tile are listed (gpu.tile's default: the
// ffma grid of so few outputs would not fill the GPU).
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s

// CHECK-LABEL: // -----// workload {{[0-9a-f]+}} linalg.matmul
// CHECK-NEXT: // sketch gpu.reduce
// CHECK: tile_reduction_using_forall
// CHECK: // sketch gpu.tile
func.func @matvec(%a: tensor<64x4096xf32>, %b: tensor<4096x1xf32>) -> tensor<64x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x1xf32>) -> tensor<64x1xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x4096xf32>, tensor<4096x1xf32>) outs(%f : tensor<64x1xf32>) -> tensor<64x1xf32>
  return %r : tensor<64x1xf32>
}

// The reduction reads %b with a stride of 4: not taken.
// CHECK-LABEL: // -----// workload {{[0-9a-f]+}} linalg.matmul
// CHECK-NEXT: // sketch gpu.ffma
func.func @strided(%a: tensor<64x4096xf32>, %b: tensor<4096x4xf32>) -> tensor<64x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x4xf32>) -> tensor<64x4xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x4096xf32>, tensor<4096x4xf32>) outs(%f : tensor<64x4xf32>) -> tensor<64x4xf32>
  return %r : tensor<64x4xf32>
}

// A short reduction: not taken.
// CHECK-LABEL: // -----// workload {{[0-9a-f]+}} linalg.matmul
// CHECK-NEXT: // sketch gpu.ffma
func.func @short(%a: tensor<64x512xf32>, %b: tensor<512x1xf32>) -> tensor<64x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x1xf32>) -> tensor<64x1xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x512xf32>, tensor<512x1xf32>) outs(%f : tensor<64x1xf32>) -> tensor<64x1xf32>
  return %r : tensor<64x1xf32>
}

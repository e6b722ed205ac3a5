// cpu.tile's default register tile for nn.Linear's layout (B stored N x K,
// only K innermost in both operands): up to 8 x 8 results, each a sum of
// vectors of 4 along K, every tile a divisor of its loop (a partial tile
// would be peeled into scalar code). A matmul with B stored K x N keeps the
// outer product (8 rows by 2 vectors), a transposed-B one with a K of no
// divisor up to 4 sums single elements.
// RUN: ke-opt sketches %s --target cpu:x86-64-v4 | FileCheck %s

// CHECK-LABEL: workload {{.*}} linalg.matmul
// CHECK: // sketch cpu.tile: {{.*}}reg.d0=8 reg.d1=8 kvec.d2=4
func.func @linear(%a: tensor<40x48xf32>, %b: tensor<72x48xf32>) -> tensor<40x72xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<40x72xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<40x72xf32>) -> tensor<40x72xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : tensor<40x48xf32>, tensor<72x48xf32>) outs(%c : tensor<40x72xf32>) -> tensor<40x72xf32>
  return %r : tensor<40x72xf32>
}

// 25 rows: 5 divides them; 503 columns (a prime): 1.
// CHECK-LABEL: workload {{.*}} linalg.matmul
// CHECK: // sketch cpu.tile: {{.*}}reg.d0=5 reg.d1=1 kvec.d2=4
func.func @odd(%a: tensor<25x24xf32>, %b: tensor<503x24xf32>) -> tensor<25x503xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<25x503xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<25x503xf32>) -> tensor<25x503xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : tensor<25x24xf32>, tensor<503x24xf32>) outs(%c : tensor<25x503xf32>) -> tensor<25x503xf32>
  return %r : tensor<25x503xf32>
}

// K of 7: no vector of 2 or 4 divides it.
// CHECK-LABEL: workload {{.*}} linalg.matmul
// CHECK: // sketch cpu.tile: {{.*}}reg.d0=8 reg.d1=8 kvec.d2=1
func.func @odd_k(%a: tensor<16x7xf32>, %b: tensor<16x7xf32>) -> tensor<16x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : tensor<16x7xf32>, tensor<16x7xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// B stored K x N: the outer product.
// CHECK-LABEL: workload {{.*}} linalg.matmul
// CHECK: // sketch cpu.tile: {{.*}}reg.d0=8 reg.d1=32 kvec.d2=1
func.func @plain(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

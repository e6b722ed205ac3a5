// Irregular and rectangular matmuls get block tiles that divide their loops
// and register tiles that divide the block tiles (no dynamic buffers in the
// kernel, every thread forall static).
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: .visible .entry kernel_kernel(
// CHECK: fma.rn.f32
// CHECK: .visible .entry kernel_kernel(
// CHECK: fma.rn.f32
func.func @irregular(%a: tensor<37x29xf32>, %b: tensor<29x53xf32>) -> tensor<37x53xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x53xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<37x53xf32>) -> tensor<37x53xf32>
  %r = linalg.matmul ins(%a, %b : tensor<37x29xf32>, tensor<29x53xf32>) outs(%c : tensor<37x53xf32>) -> tensor<37x53xf32>
  return %r : tensor<37x53xf32>
}
func.func @rect(%a: tensor<48x32xf32>, %b: tensor<32x80xf32>) -> tensor<48x80xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<48x80xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<48x80xf32>) -> tensor<48x80xf32>
  %r = linalg.matmul ins(%a, %b : tensor<48x32xf32>, tensor<32x80xf32>) outs(%c : tensor<48x80xf32>) -> tensor<48x80xf32>
  return %r : tensor<48x80xf32>
}

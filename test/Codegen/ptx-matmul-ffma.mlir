// A large f32 matmul takes gpu.ffma by default (its 64 x 64 blocks fill an
// H100's 132 SMs) and lowers to sm_90 PTX with the kernel
// ke-gpu-ffma-matmuls builds: A stored M x K copied element by element
// with cp.async (4 bytes, through L1), B K x N 16 bytes at a time (.cg),
// one barrier per K tile, 16-byte shared loads feeding the FMAs, 16-byte
// stores of the results, nothing in local memory. The stderr line names
// the sketch.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=SKETCH < %t.err
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s --check-prefix=BARRIER
// BARRIER-COUNT-1: bar.sync
// BARRIER-NOT: bar.sync
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s --check-prefix=WAIT
// WAIT: cp.async.wait_group 2
// SKETCH: linalg.matmul (gpu.ffma): {{[0-9]+}} registers, 0 bytes spill stores

// CHECK: .target sm_90
// CHECK-NOT: .local
// CHECK: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4
// CHECK: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16
// CHECK: cp.async.commit_group
// CHECK: ld.shared.v4.{{[bf]}}32
// CHECK: fma.rn.f32
// CHECK: st.global.v4.{{[bf]}}32
func.func @matmul(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x1024xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%c : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}

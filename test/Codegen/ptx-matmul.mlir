// The default CUDA schedule of a matmul lowers to sm_90 PTX: one kernel,
// inputs staged through shared memory with 128-bit global loads (non-
// coherent: read-only, noalias buffers; the output tile a plain load) and shared
// stores and loads, barriers between the stages, FMAs on the register tile,
// which stays in registers across the stages (the output tile is read once
// before the stage loop and written once after it). The kernel is bounded
// to two blocks per SM (ke-gpu-stage-loop-occupancy).
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s --check-prefix=SCALAR
// SCALAR-NOT: ld.global{{(.nc)?}}.b32
// SCALAR-NOT: st.global.b32

// CHECK: .target sm_90
// CHECK: .visible .entry kernel_kernel(
// CHECK: .minnctapersm 2
// CHECK: .shared .align {{[0-9]+}} .b8 __wg_kernel_kernel_0[4096]
// CHECK: .shared .align {{[0-9]+}} .b8 __wg_kernel_kernel_1[4096]
// CHECK: ld.global.v4.b32
// CHECK: [[LOOP:\$L__BB[0-9_]+]]:
// CHECK: ld.global.nc.v4.b32
// CHECK: ld.global.nc.v4.b32
// CHECK: st.shared.v4.b32
// CHECK: bar.sync
// CHECK: ld.shared.v4.b32
// CHECK: fma.rn.f32
// CHECK-NOT: st.global
// CHECK: bra{{.*}}[[LOOP]]
// CHECK: st.global.v4.b32
func.func @matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// gpu.mma, the default schedule of 16-bit matmuls on sm_80 and later, to
// sm_90 PTX: 128x32 and 32x128 shared tiles (8 KiB each) in three buffers
// (24 KiB each), filled by 16-byte cp.async (.cg: no L1), one group per
// stage, two stages ahead of the multiply. Each iteration of the stage
// loop issues its copies, waits until at most two groups are in flight,
// loads each warp's operands with ldmatrix (A x4, B x2 transposed) and
// runs 4 x 8 x 2 = 64 mma.sync m16n8k16, the accumulators in registers
// (starting from zero, stored once at the end). The last two stages follow
// the loop.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s
// RUN: sed 's/bf16/f16/g' %s | ke-opt compile - --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s --check-prefix=F16

// CHECK: .target sm_90
// CHECK: .shared .align {{[0-9]+}} .b8 __wg_kernel_kernel_0[24576]
// CHECK: .shared .align {{[0-9]+}} .b8 __wg_kernel_kernel_1[24576]
// CHECK-NOT: ld.global
// CHECK: cp.async.cg.shared.global [%{{.*}}], [%{{.*}}], 16;
// CHECK: cp.async.commit_group;
// CHECK: cp.async.commit_group;
// CHECK: [[LOOP:\$L__BB[0-9_]+]]:
// CHECK: cp.async.cg.shared.global
// CHECK: cp.async.commit_group;
// CHECK-NEXT: cp.async.wait_group 2;
// CHECK-NEXT: bar.sync 0;
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// CHECK-COUNT-64: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK: bra{{.*}} [[LOOP]]
// CHECK: cp.async.wait_group 0;
// CHECK-COUNT-64: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK: cp.async.wait_group 0;
// CHECK-COUNT-64: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NOT: mma.sync
// CHECK-NOT: ld.global
// CHECK: st.global.v2.b32
// F16-COUNT-192: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// F16-NOT: mma.sync
func.func @matmul_bf16(%a: tensor<256x256xbf16>, %b: tensor<256x256xbf16>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x256xbf16>, tensor<256x256xbf16>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

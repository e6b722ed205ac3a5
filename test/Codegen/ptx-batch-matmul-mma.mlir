// gpu.mma on a batch matmul: the same tensor-core stage loop as a matmul's
// (cp.async, ldmatrix, 64 mma.sync per stage and warp), one batch per
// block along the grid's z.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: mov.u32 %r{{[0-9]+}}, %ctaid.z;
// CHECK: [[LOOP:\$L__BB[0-9_]+]]:
// CHECK: cp.async.cg.shared.global
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// CHECK-COUNT-64: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK: bra{{.*}} [[LOOP]]
func.func @batch_matmul(%a: tensor<4x256x128xbf16>, %b: tensor<4x128x256xbf16>) -> tensor<4x256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<4x256x256xf32>) -> tensor<4x256x256xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x256x128xbf16>, tensor<4x128x256xbf16>) outs(%c : tensor<4x256x256xf32>) -> tensor<4x256x256xf32>
  return %r : tensor<4x256x256xf32>
}

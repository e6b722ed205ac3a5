// gpu.mma with A stored K x M (torch.matmul(A.T, B)): A's shared tile is
// K x M as well, so each warp loads its A operand with ldmatrix .trans
// (x4); B stored K x N as for the plain matmul (x2 .trans). With B stored
// N x K too (both transposed), B's ldmatrix has no .trans.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s
// RUN: sed -e 's/(m, n, k) -> (k, n)/(m, n, k) -> (n, k)/' %s | ke-opt compile - --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s --check-prefix=BOTH

// CHECK-NOT: .local
// CHECK: [[LOOP:\$L__BB[0-9_]+]]:
// CHECK-DAG: cp.async.cg.shared.global
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK: bra{{.*}} [[LOOP]]
// BOTH: [[LOOP:\$L__BB[0-9_]+]]:
// BOTH-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// BOTH-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// BOTH-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// BOTH: bra{{.*}} [[LOOP]]
func.func @matmul_transposed_a(%a: tensor<256x256xbf16>, %b: tensor<256x256xbf16>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : tensor<256x256xbf16>, tensor<256x256xbf16>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

// A matmul that reads B as (n, k) (nn.Linear's weight) stages B's tile in
// shared memory as [k][n] (ke-gpu-transpose-shared-tiles): the copy stores
// each thread's four k values a row apart, and the stage loop reads B with
// the same 128-bit shared loads as a plain matmul, with no transposes in
// registers. Stored as [n][k], the reads of a warp hit the same banks.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: .visible .entry
// CHECK: [[STAGE:\$L__BB[0-9_]+]]:
// CHECK: st.shared.v4.b32
// CHECK: st.shared.b32 [%[[T:rd[0-9]+]]],
// CHECK-NEXT: st.shared.b32 [%[[T]]+256],
// CHECK-NEXT: st.shared.b32 [%[[T]]+512],
// CHECK-NEXT: st.shared.b32 [%[[T]]+768],
// CHECK-NEXT: bar.sync 0;
// CHECK: [[STEP:\$L__BB[0-9_]+]]:
// CHECK-COUNT-8: ld.shared.v4.b32
// CHECK-NOT: ld.shared
// CHECK: bra $L__BB
func.func @mm(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

// A row reduction on sm_90: each thread's partial sum goes through shared
// memory (one barrier), then the block combines them with warp shuffles
// (gpu.all_reduce: shfl.sync.bfly within each warp, one value per warp in
// shared memory) and one thread stores the row.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: .target sm_90
// CHECK: .visible .entry kernel_kernel(
// CHECK: .shared
// CHECK: st.shared
// CHECK: bar.sync
// CHECK: ld.shared
// CHECK: shfl.sync.bfly.b32
// CHECK: bar.sync
// CHECK: st.global
func.func @row_sum(%x: tensor<64x512xf32>) -> tensor<64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.reduce ins(%x : tensor<64x512xf32>) outs(%c : tensor<64xf32>) dimensions = [1]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<64xf32>
}

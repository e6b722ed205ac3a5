// gpu.mma where K is one stage (K = 32 = kblock, KernelBench's tall-skinny
// matmul): no stage loop is left, the copies into shared memory sit between
// the fill and the accumulators' first read, which still take the fill's
// constant (the copies write other buffers), and the epilogue (the cast to
// bf16) still runs on the registers: no local memory.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK-NOT: .local
// CHECK-NOT: ld.global.f32
// CHECK-COUNT-64: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NOT: .local
func.func @k32(%a: tensor<256x32xbf16>, %b: tensor<32x256xbf16>) -> tensor<256x256xbf16> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x32xbf16>, tensor<32x256xbf16>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  %o = tensor.empty() : tensor<256x256xbf16>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%r : tensor<256x256xf32>) outs(%o : tensor<256x256xbf16>) {
  ^bb0(%x: f32, %out: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x256xbf16>
  return %g : tensor<256x256xbf16>
}

// gpu.wgmma on nn.Linear's shape (B stored N x K: K-major, trans-b 0) with
// its epilogue (bias, ReLU, the cast to bf16) applied on the registers and
// stored as bf16 pairs; no local memory, no f32 temporary in global memory.
// RUN: ke-opt compile %s --target cuda:sm_90a --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: .target sm_90a
// CHECK-NOT: .local
// CHECK: wgmma.mma_async.sync.aligned.m64n{{128|256}}k16.f32.bf16.bf16 {{.*}}, p, 1, {{ *}}1, 0, {{ *}}0;
// CHECK: max.NaN.f32
// CHECK: cvt.rn.bf16x2.f32
// CHECK: st.global.b32
// CHECK-NOT: st.global.v2.b32
// CHECK-NOT: .local
func.func @linear_relu(%a: tensor<256x128xbf16>, %w: tensor<256x128xbf16>, %bias: tensor<256xf32>) -> tensor<256x256xbf16> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %w : tensor<256x128xbf16>, tensor<256x128xbf16>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  %o = tensor.empty() : tensor<256x256xbf16>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%r, %bias : tensor<256x256xf32>, tensor<256xf32>) outs(%o : tensor<256x256xbf16>) {
  ^bb0(%x: f32, %bv: f32, %out: bf16):
    %y = arith.addf %x, %bv : f32
    %m = arith.maximumf %y, %z : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x256xbf16>
  return %g : tensor<256x256xbf16>
}

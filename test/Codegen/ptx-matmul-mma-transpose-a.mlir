// A stored K x M (torch.matmul(A.T, B)) does not take gpu.mma: upstream's
// ldmatrix .trans addressing of a 16x16 A fragment gave every such
// candidate a wrong result on an H100 (relative L2 error 1.0), with B
// either way. These matmuls stay on CUDA cores (gpu.tile) and are correct;
// this test fails when that changes, so that the change comes with its
// device check.
// RUN: ke-opt sketches %s --target cuda:sm_90 | FileCheck %s --check-prefix=SKETCH
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s
// RUN: sed -e 's/(m, n, k) -> (k, n)/(m, n, k) -> (n, k)/' %s | ke-opt compile - --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// SKETCH: // sketch gpu.tile
// CHECK-NOT: mma.sync
// CHECK-NOT: ldmatrix
func.func @matmul_transposed_a(%a: tensor<256x256xbf16>, %b: tensor<256x256xbf16>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : tensor<256x256xbf16>, tensor<256x256xbf16>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

// A reduction whose result something else reads (here the caller) is no
// row reduction of a group: each op is a workload of its own, and cpu.rows
// does not match.
// RUN: ke-opt sketches %s --target cpu:a64fx | FileCheck %s
// CHECK: // -----// workload {{.*}} linalg.fill
// CHECK-NEXT: // fused into workload [[RED:[0-9a-f]+]]
// CHECK: // -----// workload [[RED]] linalg.generic
// CHECK-NEXT: // sketch cpu.tile
// CHECK: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch cpu.tile
// CHECK-NOT: cpu.rows
func.func @escaping_sum(%x: tensor<64x256xf32>) -> (tensor<64x256xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %er = tensor.empty() : tensor<64xf32>
  %si = linalg.fill ins(%zero : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x256xf32>) outs(%si : tensor<64xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %a = arith.addf %v, %acc : f32
      linalg.yield %a : f32
  } -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<64x256xf32>, tensor<64xf32>) outs(%e : tensor<64x256xf32>) {
    ^bb0(%v: f32, %t: f32, %o: f32):
      %y = arith.divf %v, %t : f32
      linalg.yield %y : f32
  } -> tensor<64x256xf32>
  return %r, %s : tensor<64x256xf32>, tensor<64xf32>
}

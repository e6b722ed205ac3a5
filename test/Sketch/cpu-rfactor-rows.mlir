// cpu.rfactor vectorizes the fill of its partial results and their combine
// whole: (rows x split) elements each. With many rows that straight-line
// code took LLVM minutes to compile (every candidate of a 4096 x 4096 row
// maximum timed out at 60 s), so the rule takes reductions of at most 512
// rows (split >= 2, at most 1024 partial results), and offers no split
// whose combine would exceed 1024 elements.
// RUN: ke-opt sketches %s --target cpu:a64fx --sketch cpu.rfactor | FileCheck %s
// RUN: not ke-opt sketches %s --target cpu:a64fx --sketch cpu.rfactor --knobs split.d1=4 2>&1 | FileCheck %s --check-prefix=LIMIT

// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // no sketch rule applies
func.func @many_rows(%x: tensor<4096x4096xf32>, %o: tensor<4096xf32>) -> tensor<4096xf32> {
  %mx = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4096x4096xf32>) outs(%o : tensor<4096xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %m = arith.maximumf %v, %acc : f32
      linalg.yield %m : f32
  } -> tensor<4096xf32>
  return %mx : tensor<4096xf32>
}

// 300 rows: split 2 (600 partial results), not 4 (1200).
// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch cpu.rfactor
// CHECK-NEXT: // knob threads:
// CHECK-NEXT: // knob split.d1: [2]{{$}}
// LIMIT: knob split.d1 cannot be 4
func.func @few_rows(%x: tensor<300x4096xf32>, %o: tensor<300xf32>) -> tensor<300xf32> {
  %mx = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<300x4096xf32>) outs(%o : tensor<300xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %m = arith.maximumf %v, %acc : f32
      linalg.yield %m : f32
  } -> tensor<300xf32>
  return %mx : tensor<300xf32>
}

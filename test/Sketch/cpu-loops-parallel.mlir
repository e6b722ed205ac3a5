// The cpu.loops.parallel sketch: the ops' own loops with the outermost split
// into one contiguous block per core (as the reference's OpenMP loops split
// them), one scf.forall per op of the kernel group (the anchor, its fill);
// its space is one schedule (threads = the cores).
// RUN: ke-opt sketches %s --target cpu:a64fx --sketch cpu.loops.parallel | FileCheck %s

// 6 rows on 48 cores: a row each, the fill of the maxima too.
// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // sketch cpu.loops.parallel
// CHECK-NEXT: // knob threads: [48]
// CHECK: %[[FILL:.*]] = transform.structured.match ops{["linalg.fill"]}
// CHECK-NEXT: transform.structured.tile_using_forall %[[FILL]] tile_sizes [1]
// CHECK-NEXT: %[[OP:.*]] = transform.structured.match ops{["linalg.generic"]}
// CHECK-NEXT: transform.structured.tile_using_forall %[[OP]] tile_sizes [1, 0]
func.func @rowmax(%x: tensor<6x1000xf32>) -> tensor<6xf32> {
  %ninf = arith.constant -3.40282347E+38 : f32
  %er = tensor.empty() : tensor<6xf32>
  %i = linalg.fill ins(%ninf : f32) outs(%er : tensor<6xf32>) -> tensor<6xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x1000xf32>) outs(%i : tensor<6xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %m = arith.maximumf %v, %acc : f32
      linalg.yield %m : f32
  } -> tensor<6xf32>
  return %mx : tensor<6xf32>
}

// 100 rows on 48 cores: ceil(100 / 48) = 3 rows a thread.
// CHECK-LABEL: // -----// workload {{.*}} linalg.exp
// CHECK-NEXT: // sketch cpu.loops.parallel
// CHECK: transform.structured.tile_using_forall %{{.*}} tile_sizes [3, 0]
func.func @exp(%x: tensor<100x10xf32>, %y: tensor<100x10xf32>) -> tensor<100x10xf32> {
  %r = linalg.exp ins(%x : tensor<100x10xf32>) outs(%y : tensor<100x10xf32>) -> tensor<100x10xf32>
  return %r : tensor<100x10xf32>
}

// An outermost reduction loop is not split: no cpu.loops.parallel.
// CHECK-LABEL: // -----// workload {{.*}} linalg.generic
// CHECK-NEXT: // no sketch rule applies
func.func @colsum(%x: tensor<1000x6xf32>) -> tensor<6xf32> {
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%er : tensor<6xf32>) -> tensor<6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<1000x6xf32>) outs(%i : tensor<6xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %a = arith.addf %v, %acc : f32
      linalg.yield %a : f32
  } -> tensor<6xf32>
  return %s : tensor<6xf32>
}

// 16-bit ops as written sum in 16 bits: neither cpu.loops sketch.
// CHECK-LABEL: // -----// workload {{.*}} linalg.exp
// CHECK-NEXT: // no sketch rule applies
func.func @exp_bf16(%x: tensor<100x10xbf16>, %y: tensor<100x10xbf16>) -> tensor<100x10xbf16> {
  %r = linalg.exp ins(%x : tensor<100x10xbf16>) outs(%y : tensor<100x10xbf16>) -> tensor<100x10xbf16>
  return %r : tensor<100x10xbf16>
}

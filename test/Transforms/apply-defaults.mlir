// --ke-apply-tuned-schedules without a database: every workload on tensors
// with static shapes gets the default schedule of its sketch rule, applied
// to its kernel group (the fills of its inits and its elementwise consumer)
// in place; a remark at each anchor says so. Other ops keep the default
// lowering, with a remark. cpu:x86-64-v3 fixes the vector width (8 x f32):
// a contraction's default register tile is 4 rows (16 vector registers) by
// two vectors.
// RUN: ke-opt %s --split-input-file --ke-apply-tuned-schedules="target=cpu:x86-64-v3" --verify-diagnostics | FileCheck %s

// The matmul's group: its accumulator's fill and the ReLU are scheduled with
// it (one remark, at the matmul) and no linalg op is left.
// CHECK-LABEL: func.func @matmul_relu
// CHECK-NOT:     linalg.
// CHECK:         vector.transfer_write {{.*}} vector<1x16xf32>
// CHECK:         vector.fma {{.*}} : vector<16xf32>
// CHECK:         arith.maximumf {{.*}} : vector<1x16xf32>
// CHECK-NOT:     linalg.
// CHECK-NOT:     ke.anchor
// CHECK:         return
func.func @matmul_relu(%a: tensor<32x24xf32>, %b: tensor<24x16xf32>) -> tensor<32x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  // expected-remark@+1 {{ke: no tuning database given; applied the default schedule cpu.tile {threads=1 forall.d0=0 forall.d1=0 reg.d0=4 reg.d1=16 kvec.d2=1 pad=0 unroll=1}}}
  %m = linalg.matmul ins(%a, %b : tensor<32x24xf32>, tensor<24x16xf32>) outs(%c : tensor<32x16xf32>) -> tensor<32x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<32x16xf32>) outs(%e : tensor<32x16xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.maximumf %x, %z : f32
      linalg.yield %y : f32
  } -> tensor<32x16xf32>
  return %r : tensor<32x16xf32>
}

// -----

// A fill shared by two matmuls goes into both groups; the original goes
// when the second group no longer needs it.
// CHECK-LABEL: func.func @shared_fill
// CHECK-NOT:     linalg.
// CHECK-COUNT-2: scf.for {{.*}} -> (tensor<8x8xf32>)
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @shared_fill(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-remark@+1 {{applied the default schedule cpu.tile}}
  %m1 = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-remark@+1 {{applied the default schedule cpu.tile}}
  %m2 = linalg.matmul ins(%b, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %m1, %m2 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// A fill that feeds no anchor is a workload of its own.
// CHECK-LABEL: func.func @lone_fill
// CHECK-NOT:     linalg.fill
// CHECK:         vector.transfer_write {{.*}} : vector<1x8xf32>, tensor<4x32xf32>
func.func @lone_fill() -> tensor<4x32xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  // expected-remark@+1 {{applied the default schedule cpu.tile {threads=1 forall.d0=0 forall.d1=0 reg.d0=1 reg.d1=8}}}
  %c = linalg.fill ins(%one : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %c : tensor<4x32xf32>
}

// -----

// Softmax and a row sum with its fill: one group each.
// CHECK-LABEL: func.func @softmax_rowsum
// CHECK-NOT:     linalg.
// CHECK:         math.exp {{.*}} : vector<1x8xf32>
// CHECK-NOT:     linalg.
// CHECK:         vector.reduction <add>
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @softmax_rowsum(%x: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  // expected-remark@+1 {{applied the default schedule cpu.softmax}}
  %s = linalg.softmax dimension(1) ins(%x : tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %er = tensor.empty() : tensor<16xf32>
  %cr = linalg.fill ins(%z : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  // expected-remark@+1 {{applied the default schedule cpu.tile}}
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x32xf32>) outs(%cr : tensor<16xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %t = arith.addf %v, %acc : f32
      linalg.yield %t : f32
  } -> tensor<16xf32>
  return %s, %sum : tensor<16x32xf32>, tensor<16xf32>
}

// -----

// Schedules were measured on tensors of static shapes; anything else keeps
// the default lowering.
// CHECK-LABEL: func.func @dynamic
// CHECK:         linalg.matmul
func.func @dynamic(%a: tensor<?x16xf32>, %b: tensor<16x8xf32>, %c: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-remark@+1 {{has dynamic shapes; left to the default lowering}}
  %m = linalg.matmul ins(%a, %b : tensor<?x16xf32>, tensor<16x8xf32>) outs(%c : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %m : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @buffers
// CHECK:         linalg.matmul
func.func @buffers(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  // expected-remark@+1 {{is on buffers (schedules apply to linalg on tensors); left to the default lowering}}
  linalg.matmul ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  return
}

// -----

// No schedule for an unknown op: a module without workloads is unchanged.
// CHECK-LABEL: func.func @no_workloads
// CHECK-NEXT:    arith.addf
func.func @no_workloads(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  return %y : f32
}

// -----

// An RMS norm: the sum of squares (a row reduction) and its fill are in the
// normalization's group, scheduled with it by cpu.rows (one remark, at the
// normalization, although the reduction comes first in the block and
// ranks first among anchors). One block holds all 64 rows here (one
// thread below 2^16 elements, so the forall folds away): per row the sum
// of 8-wide partial sums, combined once; then per row the square root,
// computed once outside the loop over the row's vectors.
// CHECK-LABEL: func.func @rmsnorm
// CHECK-NOT:     linalg.
// CHECK:         scf.for
// CHECK:           scf.for {{.*}} -> (tensor<1x8xf32>, vector<1x8xf32>)
// CHECK:             arith.mulf {{.*}} : vector<1x8xf32>
// CHECK:           vector.reduction <add>
// CHECK:         scf.for
// CHECK:           math.rsqrt {{.*}} : vector<1xf32>
// CHECK-NEXT:      vector.broadcast
// CHECK-NEXT:      scf.for
// CHECK:             vector.transfer_write {{.*}} vector<1x8xf32>
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @rmsnorm(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 3.906250e-03 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %er = tensor.empty() : tensor<64xf32>
  %si = linalg.fill ins(%zero : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x256xf32>) outs(%si : tensor<64xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %q = arith.mulf %v, %v : f32
      %a = arith.addf %q, %acc : f32
      linalg.yield %a : f32
  } -> tensor<64xf32>
  // expected-remark@+1 {{ke: no tuning database given; applied the default schedule cpu.rows}}
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<64x256xf32>, tensor<64xf32>) outs(%e : tensor<64x256xf32>) {
    ^bb0(%v: f32, %t: f32, %o: f32):
      %m = arith.mulf %t, %inv : f32
      %p = arith.addf %m, %eps : f32
      %rs = math.rsqrt %p : f32
      %y = arith.mulf %v, %rs : f32
      linalg.yield %y : f32
  } -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}

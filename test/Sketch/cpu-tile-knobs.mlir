// Given knob values: big problems tile across threads, partial tiles are
// peeled (innermost loop first), and assignments over the target's limits
// are flagged.
// RUN: ke-opt sketches %s --target cpu:a64fx --knobs threads=48,forall.d0=16,forall.d1=32,kblock.d2=64,reg.d0=8,reg.d1=16,kvec.d2=4 | FileCheck %s
// RUN: ke-opt sketches %s --target cpu:a64fx --knobs reg.d0=64,reg.d1=64 | FileCheck %s --check-prefix=LIMITS
// RUN: not ke-opt sketches %s --target cpu:a64fx --knobs reg.d0=7 2>&1 | FileCheck %s --check-prefix=BADVALUE
// RUN: not ke-opt sketches %s --target cpu:a64fx --knobs nope=1 2>&1 | FileCheck %s --check-prefix=BADNAME

// CHECK: // sketch cpu.tile: threads=48 forall.d0=16 forall.d1=32 kblock.d2=64 reg.d0=8 reg.d1=16 kvec.d2=4
// CHECK: %[[OP:.*]], %{{.*}} = transform.structured.tile_using_forall %{{.*}} tile_sizes [16, 32, 0]
// CHECK: %{{.*}}, %[[KB:loop[0-9]+]] = transform.structured.tile_using_for %[[OP]] tile_sizes [0, 0, 64]
// CHECK: %{{.*}}, %[[M:loop[0-9]+]], %[[N:loop[0-9]+]] = transform.structured.tile_using_for %{{.*}} tile_sizes [8, 16, 0]
// CHECK: %{{.*}}, %[[K:loop[0-9]+]] = transform.structured.tile_using_for %{{.*}} tile_sizes [0, 0, 4]
// k: 200 = 3 x 64 + 8, so the k-block loop has a partial block and is
// peeled; 64 and 8 are multiples of 4, so the inner k loop is not.
// m: 100 = 6 x 16 + 4, so the last outer tile is partial and the register
// loop over it (step 8) is peeled. n: 64 = 2 x 32 = 4 x 16: nothing to peel.
// Innermost first: the register loop, then the k-block loop around it.
// CHECK: transform.loop.peel %[[M]]
// CHECK-NEXT: transform.loop.peel %[[KB]]
// CHECK-NOT: transform.loop.peel
// CHECK: vectorize_children_and_apply_patterns

// LIMITS: // outside the target's limits: register tile of 4096 elements exceeds the 512 that fit in vector registers
// BADVALUE: ke-opt sketches: error: knob reg.d0 cannot be 7
// BADNAME: ke-opt sketches: error: bad knob 'nope=1' for sketch cpu.tile
func.func @matmul(%a: tensor<100x200xf32>, %b: tensor<200x64xf32>, %c: tensor<100x64xf32>) -> tensor<100x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<100x200xf32>, tensor<200x64xf32>) outs(%c : tensor<100x64xf32>) -> tensor<100x64xf32>
  return %r : tensor<100x64xf32>
}

// pad=1: the partial tiles of a contraction are padded with zeros to the
// register and inner tiles instead of being peeled; the vectorizer turns the
// pads into masked reads.
// RUN: ke-opt sketches %s --target cpu:a64fx --knobs threads=48,forall.d0=16,forall.d1=32,kblock.d2=64,reg.d0=8,reg.d1=16,kvec.d2=4,pad=1 | FileCheck %s --check-prefix=PAD
// PAD: // knob pad: [0] 1
// PAD-NOT: transform.loop.peel
// PAD: transform.structured.pad %{{.*}} pad_to_multiple_of [8, 16, 4] {padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32], padding_dimensions = [0, 1, 2]}
// PAD-NOT: transform.loop.peel
// PAD: vectorize_children_and_apply_patterns %{{.*}} {vectorize_padding}

// unroll: the loop over inner reduction tiles is unrolled; when it was
// peeled, its main part is.
// RUN: ke-opt sketches %s --target cpu:a64fx --knobs threads=48,forall.d0=16,forall.d1=32,kblock.d2=64,reg.d0=8,reg.d1=16,kvec.d2=8,unroll=4 | FileCheck %s --check-prefix=UNROLL
// RUN: ke-opt sketches %s --target cpu:a64fx --knobs threads=48,forall.d0=16,forall.d1=32,kblock.d2=64,reg.d0=8,reg.d1=16,kvec.d2=16,unroll=2 | FileCheck %s --check-prefix=UNROLL-PEELED
// UNROLL: %{{.*}}, %[[K:loop[0-9]+]] = transform.structured.tile_using_for %{{.*}} tile_sizes [0, 0, 8]
// UNROLL: transform.loop.unroll %[[K]] {factor = 4} : !transform.op<"scf.for">
// 64 = 4 x 16 but the last k block has 8 elements: the inner k loop is peeled.
// UNROLL-PEELED: %{{.*}}, %[[K:loop[0-9]+]] = transform.structured.tile_using_for %{{.*}} tile_sizes [0, 0, 16]
// UNROLL-PEELED: %[[MAIN:main[0-9]+]], %{{.*}} = transform.loop.peel %[[K]]
// UNROLL-PEELED: transform.loop.unroll %[[MAIN]] {factor = 2} : !transform.any_op

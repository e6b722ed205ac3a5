// An f32 matmul on a +3xtf32 target: each TF32 mma.sync of +tf32 becomes
// three (lo x hi, hi x lo, hi x hi, the small products first), each f32
// operand split into its top 10 mantissa bits (a mask) and the f32
// remainder; the splits of a fragment are shared by the mma.sync ops that
// read it. Each stage accumulates from zero and its sum is added to the
// carried one with a rounded f32 add (the tensor cores' accumulation
// truncates). Warp tiles are 64x32 by default (both accumulators fit the
// registers): 8 warps, each 4 x 4 tiles x 2 K steps x 3 per stage, for the
// loop and its two peeled stages: 288 mma.sync; 48 masks and 64 adds per
// stage.
// RUN: ke-opt compile %s --target cuda:sm_90+3xtf32 --emit=asm -o %t.ptx 2>&1 | FileCheck %s --check-prefix=SPILLS
// RUN: FileCheck %s < %t.ptx
// RUN: grep -c "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" %t.ptx | FileCheck %s --check-prefix=MMA
// RUN: grep -c "and.b32.*-8192" %t.ptx | FileCheck %s --check-prefix=MASK
// RUN: grep -c "add.rn.f32" %t.ptx | FileCheck %s --check-prefix=ADD
// SPILLS: (gpu.mma): {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads
// MMA: {{^}}288{{$}}
// MASK: {{^}}144{{$}}
// ADD: {{^}}192{{$}}

// CHECK-NOT: .local
// CHECK: [[LOOP:\$L__BB[0-9_]+]]:
// CHECK: and.b32 {{.*}}-8192
// CHECK: sub.rn.f32
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK: add.rn.f32
// CHECK: bra{{.*}} [[LOOP]]
func.func @f32(%a: tensor<256x128xf32>, %b: tensor<128x256xf32>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x128xf32>, tensor<128x256xf32>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

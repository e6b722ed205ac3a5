// A layer norm on sm_90 is one launch: each block reads its row with v4
// loads (non-coherent: the buffers are noalias and x read-only), sums it
// (block-wide shuffles), sums the squared deviations from the mean from
// the same registers (no second read of the chunk across the barriers),
// normalizes and stores; no second kernel. The
// normalization runs in interleaved steps of threads*kvec elements (v4
// stores 512 bytes apart for 32 threads) with no barrier between the steps
// (hoistBarriersOutOfStreamingLoops), one after them.
// RUN: ke-opt compile %S/../Sketch/gpu-rownorm.mlir --target cuda:sm_90 --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: .visible .entry kernel_kernel(
// CHECK: ld.global.nc.v4.b32
// CHECK: shfl.sync.bfly.b32
// CHECK-NOT: ld.global
// CHECK: sub.rn.f32
// CHECK: shfl.sync.bfly.b32
// CHECK: rsqrt.approx
// CHECK: st.global.v4.b32 [[[OUT:%rd[0-9]+]]]
// CHECK-NOT: bar.sync
// CHECK: st.global.v4.b32 [[[OUT]]+512]
// CHECK-NEXT: bar.sync
// CHECK-NOT: .entry

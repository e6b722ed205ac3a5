// gpu.wgmma on sm_90a, through the whole CUDA lowering to PTX (ptxas, when
// found, takes it): wgmma.mma_async m64n256k16 with B MN-major (trans-b 1)
// for B stored K x N, K-major (trans-b 0) for B stored N x K; tiles loaded
// by TMA (the tensor maps are 128-byte grid-constant parameters, read at
// their generic address; one mbarrier per stage, expecting the stage's
// bytes, waited on by phase parity), accumulators stored from registers, no
// local memory. The epilogue (bias, ReLU, bf16) runs on the registers.
// RUN: ke-opt compile %s --target cuda:sm_90a --emit=asm -o - 2>/dev/null | FileCheck %s

// CHECK: .target sm_90a
// CHECK: .param .align 64 .b8 {{.*}}_param_0[128]
// CHECK: .param .align 64 .b8 {{.*}}_param_1[128]
// CHECK-NOT: .local
// CHECK: cvta.param.u64
// CHECK: mbarrier.init.shared.b64
// CHECK: fence.mbarrier_init.release.cluster
// CHECK: mbarrier.arrive.expect_tx.shared.b64
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: wgmma.fence.sync.aligned
// CHECK: wgmma.mma_async.sync.aligned.m64n{{128|256}}k16.f32.bf16.bf16 {{.*}}, p, 1, {{ *}}1, 0, {{ *}}1;
// CHECK: wgmma.commit_group.sync.aligned
// CHECK: wgmma.wait_group.sync.aligned 1;
// CHECK: st.global.v2.b32
// CHECK-NOT: .local
func.func @kn(%a: tensor<256x128xbf16>, %b: tensor<128x512xbf16>) -> tensor<256x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x512xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x128xbf16>, tensor<128x512xbf16>) outs(%c : tensor<256x512xf32>) -> tensor<256x512xf32>
  return %r : tensor<256x512xf32>
}

// A stored K x M and B N x K: trans-a 1, trans-b 0.
// CHECK: wgmma.mma_async.sync.aligned.m64n{{128|256}}k16.f32.bf16.bf16 {{.*}}, p, 1, {{ *}}1, 1, {{ *}}0;
func.func @ta_tb(%a: tensor<128x256xbf16>, %b: tensor<512x128xbf16>) -> tensor<256x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x512xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : tensor<128x256xbf16>, tensor<512x128xbf16>) outs(%c : tensor<256x512xf32>) -> tensor<256x512xf32>
  return %r : tensor<256x512xf32>
}

// gpu.mma with a fused consumer (an MLP layer: nn.Linear's bf16 matmul with
// an f32 accumulator, + bias, tanh GELU, bf16 result): the consumer runs
// on the accumulator registers after the stage loop. Each thread reads the
// bias elements of its fragment's columns (two bf16 per 8-column tile: 8
// loads for a 64-wide warp tile), computes its 64 x 2 x 2 elements and
// writes them two bf16 at a time; nothing goes through local memory and no
// f32 result reaches global memory.
// RUN: ke-opt compile %s --target cuda:sm_90 --emit=asm -o %t.ptx 2>/dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: grep -c "ld.global.nc.v2.b16" %t.ptx | FileCheck %s --check-prefix=BIAS
// RUN: grep -c "st.global.b32" %t.ptx | FileCheck %s --check-prefix=STORES
// BIAS: {{^}}8{{$}}
// STORES: {{^}}64{{$}}

// CHECK-NOT: .local
// CHECK: [[LOOP:\$L__BB[0-9_]+]]:
// CHECK-COUNT-64: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK: bra{{.*}} [[LOOP]]
// CHECK-NOT: st.global.{{.*}}f32
// CHECK-NOT: .local
func.func @mlp(%x: tensor<256x128xbf16>, %w: tensor<512x128xbf16>, %bias: tensor<512xbf16>) -> tensor<256x512xbf16> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x512xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : tensor<256x128xbf16>, tensor<512x128xbf16>) outs(%c : tensor<256x512xf32>) -> tensor<256x512xf32>
  %o = tensor.empty() : tensor<256x512xbf16>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%r, %bias : tensor<256x512xf32>, tensor<512xbf16>) outs(%o : tensor<256x512xbf16>) {
  ^bb0(%a: f32, %b: bf16, %out: bf16):
    %bf = arith.extf %b : bf16 to f32
    %s = arith.addf %a, %bf : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %k = arith.constant 0.7978845608 : f32
    %c0 = arith.constant 0.044715 : f32
    %x2 = arith.mulf %s, %s : f32
    %x3 = arith.mulf %x2, %s : f32
    %t0 = arith.mulf %x3, %c0 : f32
    %t1 = arith.addf %s, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t3 = math.tanh %t2 : f32
    %t4 = arith.addf %t3, %one : f32
    %t5 = arith.mulf %s, %t4 : f32
    %t6 = arith.mulf %t5, %half : f32
    %t = arith.truncf %t6 : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x512xbf16>
  return %g : tensor<256x512xbf16>
}

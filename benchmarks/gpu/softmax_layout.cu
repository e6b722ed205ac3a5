// Softmax 4096x4096 f32 in hand-written CUDA: which layout of a row over a
// block's threads reaches the copy bandwidth (evidence for the interleaved
// row steps of ke's GPU row rules, docs/gpu.md). Run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o softmax_layout benchmarks/gpu/softmax_layout.cu
//   ./softmax_layout
// Timing as ke's runner: CUDA events, the L2 flushed by a read of 128 MiB
// before each run, median of 30. Modes:
//   0  each thread a contiguous chunk of the row, re-read in each pass
//   1  contiguous chunk kept in registers
//   2  interleaved float4s (thread t: t, t+T, ...), in registers
//   3  interleaved, re-read in each pass
//   4  reductions contiguous, normalization interleaved (ke's structure),
//      fast exp, multiply by 1/sum
//   5  as 4 with expf and a true division (ke's arithmetic)
//   6  as 5 with interleaved reductions
// On an NVIDIA H200, 2026-11-21 (copy 4128 GB/s): mode 0 at T=512 44.4 us
// (3022 GB/s), mode 2 at T=256 31.9 us (4211 GB/s), mode 5 at T=512
// 34.6 us (3880 GB/s), mode 6 at T=256 32.1 us (4182 GB/s).
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define N 4096
template <int T> __device__ float blockReduce(float v, float *sh, bool isMax) {
  for (int o = 16; o; o >>= 1) { float w = __shfl_xor_sync(0xffffffff, v, o); v = isMax ? fmaxf(v, w) : v + w; }
  if (T > 32) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    v = lane < T / 32 ? sh[lane] : (isMax ? -3.4e38f : 0.f);
    for (int o = 16; o; o >>= 1) { float w = __shfl_xor_sync(0xffffffff, v, o); v = isMax ? fmaxf(v, w) : v + w; }
    __syncthreads();
  }
  return v;
}
// MODE 0: contiguous chunk, reread from global (L1) each phase
// MODE 1: contiguous chunk in registers
// MODE 2: strided float4 (coalesced) in registers
// MODE 3: strided float4, reread each phase
template <int T, int MODE> __global__ void __launch_bounds__(T) softmax(const float *__restrict__ x, float *__restrict__ y) {
  if constexpr (MODE >= 4) {
    constexpr int C = N / T, V = C / 4;
    constexpr bool ACC = MODE != 4, REDSTRIDED = MODE == 6;
    __shared__ float sh[32];
    const float4 *row = reinterpret_cast<const float4 *>(x + (size_t)blockIdx.x * N);
    float4 *out = reinterpret_cast<float4 *>(y + (size_t)blockIdx.x * N);
    auto ridx = [&](int k) { return REDSTRIDED ? threadIdx.x + k * T : threadIdx.x * V + k; };
    auto E = [&](float v) { return ACC ? expf(v) : __expf(v); };
    float m = -3.4e38f;
    for (int k = 0; k < V; ++k) { float4 r = row[ridx(k)]; m = fmaxf(m, fmaxf(fmaxf(r.x, r.y), fmaxf(r.z, r.w))); }
    m = blockReduce<T>(m, sh, true);
    float s = 0;
    for (int k = 0; k < V; ++k) { float4 a = row[ridx(k)]; s += E(a.x - m) + E(a.y - m) + E(a.z - m) + E(a.w - m); }
    s = blockReduce<T>(s, sh, false);
    float inv = 1.f / s;
    for (int k = 0; k < V; ++k) { float4 a = row[threadIdx.x + k * T];
      out[threadIdx.x + k * T] = ACC ? make_float4(E(a.x - m) / s, E(a.y - m) / s, E(a.z - m) / s, E(a.w - m) / s)
                                     : make_float4(E(a.x - m) * inv, E(a.y - m) * inv, E(a.z - m) * inv, E(a.w - m) * inv); }
    return;
  } else {
  constexpr int C = N / T, V = C / 4;
  __shared__ float sh[32];
  const float4 *row = reinterpret_cast<const float4 *>(x + (size_t)blockIdx.x * N);
  float4 *out = reinterpret_cast<float4 *>(y + (size_t)blockIdx.x * N);
  auto idx = [&](int k) { return (MODE == 0 || MODE == 1) ? threadIdx.x * V + k : threadIdx.x + k * T; };
  float4 r[V];
  float m = -3.4e38f;
  for (int k = 0; k < V; ++k) { r[k] = row[idx(k)]; m = fmaxf(m, fmaxf(fmaxf(r[k].x, r[k].y), fmaxf(r[k].z, r[k].w))); }
  m = blockReduce<T>(m, sh, true);
  float s = 0;
  for (int k = 0; k < V; ++k) { float4 a = (MODE == 0 || MODE == 3) ? row[idx(k)] : r[k]; s += __expf(a.x - m) + __expf(a.y - m) + __expf(a.z - m) + __expf(a.w - m); }
  s = blockReduce<T>(s, sh, false);
  float inv = 1.f / s;
  for (int k = 0; k < V; ++k) { float4 a = (MODE == 0 || MODE == 3) ? row[idx(k)] : r[k];
    out[idx(k)] = make_float4(__expf(a.x - m) * inv, __expf(a.y - m) * inv, __expf(a.z - m) * inv, __expf(a.w - m) * inv); }
  }
}
float *fl; size_t flN;
__global__ void readFlush(const float4 *p, size_t n, float *o) { float a = 0; for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a += p[i].x; if (a == 1234.5f) *o = a; }
template <typename F> float timeIt(F f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b); std::vector<float> t;
  for (int i = 0; i < 30; ++i) { readFlush<<<1056, 256>>>((const float4 *)fl, flN / 4, fl); cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms * 1000); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
int main() {
  float *x, *y; cudaMalloc(&x, 4ull * N * N); cudaMalloc(&y, 4ull * N * N); cudaMemset(x, 0, 4ull * N * N);
  flN = 32ull << 20; cudaMalloc(&fl, flN * 4); cudaMemset(fl, 0, flN * 4);
  double bytes = 2.0 * 4 * N * N;
#define RUN(T, M) { float us = timeIt([&] { softmax<T, M><<<N, T>>>(x, y); }); printf("T=%4d mode=%d %7.1f us %5.0f GB/s\n", T, M, us, bytes / us / 1e3); }
  RUN(256, 0) RUN(512, 0) RUN(256, 2) RUN(512, 2) RUN(256, 4) RUN(512, 4) RUN(256, 5) RUN(512, 5) RUN(256, 6) RUN(512, 6)
  float us = timeIt([&] { cudaMemcpyAsync(y, x, 4ull * N * N, cudaMemcpyDeviceToDevice); }); printf("copy %7.1f us %5.0f GB/s\n", us, bytes / us / 1e3);
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}

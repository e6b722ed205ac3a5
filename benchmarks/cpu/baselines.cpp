//===- baselines.cpp - Vendor-library baselines on this CPU ---------------===//
//
// Times OpenBLAS and oneDNN sgemm and oneDNN convolution on the suite's full shapes with
// ke's measurement protocol (warm-up, repeats until 0.5 s, median), on the
// number of threads given, so that benchmarks/cpu/compare.py can report
// ke's tuned kernels as ratios measured in the same run.
//
//   ke-baselines sgemm M N K THREADS          (OpenBLAS)
//   ke-baselines onednn-sgemm M N K THREADS   (oneDNN's dnnl_sgemm)
//   ke-baselines conv2d-nhwc N H W C KH KW F THREADS   (input pre-padded,
//                                                       stride 1)
//   ke-baselines copy BYTES THREADS           (memcpy split across threads:
//                                              the copy bandwidth that
//                                              memory-bound kernels are
//                                              held against)
//   ke-baselines fma-peak THREADS             (independent f32 vector FMAs
//                                              on every thread, AVX-512
//                                              where the CPU has it, else
//                                              AVX2: the compute peak that
//                                              GEMMs and convolutions are
//                                              held against)
// Prints one JSON object: {"baseline", "seconds", "gflops", "threads"}
// (copy: "gbps", bytes read and written per second, instead of "gflops";
// fma-peak also names the "isa").
//
//===----------------------------------------------------------------------===//

#include <cblas.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern "C" void openblas_set_num_threads(int);

namespace {

double medianSeconds(const std::function<void()> &run) {
  run(); // warm-up
  std::vector<double> times;
  double total = 0;
  while (times.size() < 5 || (total < 0.5 && times.size() < 1000)) {
    auto start = std::chrono::steady_clock::now();
    run();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             start)
                   .count();
    times.push_back(s);
    total += s;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.1f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = (rng() & 1) ? dist(rng) : -dist(rng);
  return v;
}

void report(const char *name, double seconds, double flops, int threads) {
  std::printf("{\"baseline\":\"%s\",\"seconds\":%.9g,\"gflops\":%.4f,"
              "\"threads\":%d}\n",
              name, seconds, flops / seconds / 1e9, threads);
}

int sgemm(long m, long n, long k, int threads) {
  openblas_set_num_threads(threads);
  std::vector<float> a = randomFloats(m * k, 1), b = randomFloats(k * n, 2),
                     c(m * n, 0.f);
  double s = medianSeconds([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                a.data(), k, b.data(), n, 1.0f, c.data(), n);
  });
  report("openblas-sgemm", s, 2.0 * m * n * k, threads);
  return 0;
}

int onednnSgemm(long m, long n, long k, int threads) {
  // dnnl_sgemm is row-major; it threads with OMP_NUM_THREADS (compare.py).
  std::vector<float> a = randomFloats(m * k, 1), b = randomFloats(k * n, 2),
                     c(m * n, 0.f);
  double s = medianSeconds([&] {
    dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 1.0f,
               c.data(), n);
  });
  report("onednn-sgemm", s, 2.0 * m * n * k, threads);
  return 0;
}

int conv2dNhwc(long batch, long h, long w, long c, long kh, long kw, long f,
               int threads) {
  using namespace dnnl;
  // oneDNN runs on its own threading runtime; OMP_NUM_THREADS must be set
  // by the caller (compare.py does).
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  long oh = h - kh + 1, ow = w - kw + 1;
  memory::dims src{batch, c, h, w}, wei{f, c, kh, kw}, dst{batch, f, oh, ow};
  auto srcMd = memory::desc(src, memory::data_type::f32, memory::format_tag::nhwc);
  auto weiMd = memory::desc(wei, memory::data_type::f32, memory::format_tag::hwio);
  auto dstMd = memory::desc(dst, memory::data_type::f32, memory::format_tag::nhwc);
  auto anyWei = memory::desc(wei, memory::data_type::f32, memory::format_tag::any);
  // oneDNN 2.x (Debian 12): an op descriptor, then the primitive descriptor.
  convolution_forward::desc desc(prop_kind::forward_inference,
                                 algorithm::convolution_direct, srcMd, anyWei,
                                 dstMd, {1, 1}, {0, 0}, {0, 0});
  convolution_forward::primitive_desc pd(desc, eng);
  std::vector<float> srcData = randomFloats(batch * h * w * c, 3),
                     weiData = randomFloats(kh * kw * c * f, 4),
                     dstData(batch * oh * ow * f);
  memory srcMem(srcMd, eng, srcData.data()), weiUser(weiMd, eng, weiData.data()),
      dstMem(dstMd, eng, dstData.data());
  // Weights reordered once into oneDNN's preferred layout, outside the timing
  // (ke's kernels take weights as given; this favours oneDNN).
  memory weiMem = weiUser;
  if (pd.weights_desc() != weiMd) {
    weiMem = memory(pd.weights_desc(), eng);
    reorder(weiUser, weiMem).execute(strm, weiUser, weiMem);
  }
  convolution_forward conv(pd);
  double s = medianSeconds([&] {
    conv.execute(strm, {{DNNL_ARG_SRC, srcMem},
                        {DNNL_ARG_WEIGHTS, weiMem},
                        {DNNL_ARG_DST, dstMem}});
    strm.wait();
  });
  report("onednn-conv2d-nhwc", s, 2.0 * batch * oh * ow * f * kh * kw * c,
         threads);
  return 0;
}

int copy(long bytes, int threads) {
  // Three source and destination pairs, rotated as ke's evaluator rotates
  // its input sets, so that the copies of a run do not find their data in
  // the cache left by the one before (for sizes beyond the last level).
  constexpr int kSets = 3;
  std::vector<std::vector<char>> src, dst;
  for (int set = 0; set < kSets; ++set) {
    src.emplace_back(bytes, char(set + 1));
    dst.emplace_back(bytes, 0);
  }
  threads = std::max(1, threads);
  int set = 0;
  double s = medianSeconds([&] {
    const char *from = src[set].data();
    char *to = dst[set].data();
    set = (set + 1) % kSets;
    long chunk = (bytes + threads - 1) / threads;
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t) {
      long begin = std::min(bytes, t * chunk),
           end = std::min(bytes, begin + chunk);
      team.emplace_back(
          [=] { std::memcpy(to + begin, from + begin, end - begin); });
    }
    for (std::thread &thread : team)
      thread.join();
  });
  std::printf("{\"baseline\":\"copy\",\"seconds\":%.9g,\"gbps\":%.4f,"
              "\"threads\":%d}\n",
              s, 2.0 * bytes / s / 1e9, threads);
  return 0;
}

// The FMA loop of fma-peak: kAccumulators independent chains (more than
// FMA latency x pipes on current x86 cores, so the pipes never wait),
// `iterations` steps each. The vector width comes from the caller's
// target attribute; the result is returned so that nothing is dead code.
constexpr int kAccumulators = 16;
constexpr long kFmaIterations = 1 << 24;

template <typename V>
static inline float fmaChains(float seed) {
  V acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i)
    acc[i] = V{} + seed * float(i + 1);
  V mul = V{} + 0.9999999f, add = V{} + 1e-7f;
  for (long it = 0; it < kFmaIterations; ++it)
    for (int i = 0; i < kAccumulators; ++i)
      acc[i] = acc[i] * mul + add; // one FMA (GNU C++ contracts by default)
  float sum = 0;
  for (int i = 0; i < kAccumulators; ++i)
    for (unsigned lane = 0; lane < sizeof(V) / sizeof(float); ++lane)
      sum += acc[i][lane];
  return sum;
}

typedef float V16 __attribute__((vector_size(64)));
typedef float V8 __attribute__((vector_size(32)));

__attribute__((target("avx512f,fma"))) float fmaChains512(float seed) {
  return fmaChains<V16>(seed);
}
__attribute__((target("avx2,fma"))) float fmaChains256(float seed) {
  return fmaChains<V8>(seed);
}

int fmaPeak(int threads) {
  bool avx512 = __builtin_cpu_supports("avx512f");
  int lanes = avx512 ? 16 : 8;
  threads = std::max(1, threads);
  std::vector<float> sums(threads);
  double s = medianSeconds([&] {
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t)
      team.emplace_back([&, t] {
        sums[t] = avx512 ? fmaChains512(1e-3f * (t + 1))
                         : fmaChains256(1e-3f * (t + 1));
      });
    for (std::thread &thread : team)
      thread.join();
  });
  double flops = 2.0 * lanes * kAccumulators * double(kFmaIterations) * threads;
  float checksum = 0;
  for (float v : sums)
    checksum += v;
  std::printf("{\"baseline\":\"fma-peak\",\"isa\":\"%s\",\"seconds\":%.9g,"
              "\"gflops\":%.4f,\"threads\":%d,\"checksum\":%g}\n",
              avx512 ? "avx512" : "avx2", s, flops / s / 1e9, threads,
              checksum);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string what = argc > 1 ? argv[1] : "";
  if (what == "sgemm" && argc == 6)
    return sgemm(std::atol(argv[2]), std::atol(argv[3]), std::atol(argv[4]),
                 std::atoi(argv[5]));
  if (what == "onednn-sgemm" && argc == 6)
    return onednnSgemm(std::atol(argv[2]), std::atol(argv[3]),
                       std::atol(argv[4]), std::atoi(argv[5]));
  if (what == "conv2d-nhwc" && argc == 10)
    return conv2dNhwc(std::atol(argv[2]), std::atol(argv[3]),
                      std::atol(argv[4]), std::atol(argv[5]),
                      std::atol(argv[6]), std::atol(argv[7]),
                      std::atol(argv[8]), std::atoi(argv[9]));
  if (what == "copy" && argc == 4)
    return copy(std::atol(argv[2]), std::atoi(argv[3]));
  if (what == "fma-peak" && argc == 3)
    return fmaPeak(std::atoi(argv[2]));
  std::fprintf(stderr,
               "usage: ke-baselines sgemm M N K THREADS\n"
               "       ke-baselines onednn-sgemm M N K THREADS\n"
               "       ke-baselines conv2d-nhwc N H W C KH KW F THREADS\n"
               "       ke-baselines copy BYTES THREADS\n"
               "       ke-baselines fma-peak THREADS\n");
  return 2;
}

//===- L2FlushTest.cpp - The read-only L2 flush kernel, without a GPU -----===//
//
// The GPU runner flushes the L2 with a hand-written PTX kernel
// (ke/Runtime/L2Flush.h). Without a GPU: its launch covers the buffer, and
// ptxas assembles it for sm_90 with its loads kept (skipped when there is no
// ptxas, unless $KE_REQUIRE_PTXAS is set: `ctest -L ptxas` sets it); and, on
// a fake driver table, the runner launches it (or falls back to a memset).
//
//===----------------------------------------------------------------------===//

// The runner's driver table is private to lib/Runtime; the fake below fills
// one to watch what the runner asks of the driver.
#include "../../lib/Runtime/GpuApi.h"

#include "ke/Codegen/GpuPipeline.h"
#include "ke/Runtime/GpuRunner.h"
#include "ke/Runtime/L2Flush.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

#include <cstdlib>

using namespace ke;

namespace {

TEST(L2FlushTest, PtxDeclaresTheKernelTheRunnerLaunches) {
  llvm::StringRef ptx = getL2FlushKernelPtx();
  EXPECT_TRUE(ptx.contains(".visible .entry " + std::string(kL2FlushKernelName) +
                           "("))
      << ptx.str();
  EXPECT_TRUE(ptx.contains("ld.global.v4.u32"));
  // One store, the guarded one: the flush must leave no dirty line.
  EXPECT_EQ(ptx.count("st.global"), 1u);
  EXPECT_EQ(ptx.count("st."), 1u);
}

TEST(L2FlushTest, LaunchCoversTheBufferInOneWave) {
  // H200: 60 MiB of L2, a 120 MiB buffer, 132 SMs.
  L2FlushLaunch h200 = getL2FlushLaunch(120ull << 20, 132);
  EXPECT_EQ(h200.vectors, (120ull << 20) / 16);
  EXPECT_EQ(h200.threads, 256u);
  EXPECT_EQ(h200.blocks, 132u * 8);

  L2FlushLaunch small = getL2FlushLaunch(4096 + 15, 132);
  EXPECT_EQ(small.vectors, 256u);
  EXPECT_EQ(small.blocks, 1u);
  EXPECT_EQ(getL2FlushLaunch(4096 * 3, 132).blocks, 3u);
  EXPECT_EQ(getL2FlushLaunch(0, 132).blocks, 1u);
  // Unknown SM count: 132 assumed.
  EXPECT_EQ(getL2FlushLaunch(1ull << 30, 0).blocks, 132u * 8);
}

/// What the runner asked of the fake driver.
struct FakeDriver {
  int loadResult = 0;
  int loads = 0;
  std::vector<std::pair<GpuAddress, size_t>> memsets;
  std::vector<GpuLaunch> launches;
  uint64_t launchedAddress = 0, launchedVectors = 0;
  uint32_t launchedMagic = 0;
  GpuAddress next = 0x10000;
} fake;

struct FakeCalls {
  static int memAlloc(GpuAddress *address, size_t bytes) {
    *address = fake.next;
    fake.next += (bytes + 255) / 256 * 256;
    return 0;
  }
  static int memFree(GpuAddress) { return 0; }
  static int copyToDevice(GpuAddress, const void *, size_t) { return 0; }
  static int copyToHost(void *, GpuAddress, size_t) { return 0; }
  static int copyOnDevice(GpuAddress, GpuAddress, size_t) { return 0; }
  static int memset(GpuAddress destination, unsigned char, size_t bytes) {
    fake.memsets.push_back({destination, bytes});
    return 0;
  }
  static int moduleUnload(void *) { return 0; }
  static int getFunction(void **function, void *, const char *) {
    *function = &fake.launches;
    return 0;
  }
  static int launch(void *, const GpuLaunch &launch, void **parameters) {
    fake.launches.push_back(launch);
    fake.launchedAddress = *static_cast<uint64_t *>(parameters[0]);
    fake.launchedVectors = *static_cast<uint64_t *>(parameters[1]);
    fake.launchedMagic = *static_cast<uint32_t *>(parameters[2]);
    return 0;
  }
  static int eventCreate(void **event) {
    *event = &fake;
    return 0;
  }
  static int eventDestroy(void *) { return 0; }
  static int eventRecord(void *) { return 0; }
  static int eventSynchronize(void *) { return 0; }
  static int eventElapsedTime(float *milliseconds, void *, void *) {
    *milliseconds = 1;
    return 0;
  }
  static std::string describe(int result) {
    return "FAKE_ERROR " + std::to_string(result);
  }
  static int loadPtxFunction(void **module, void **function, const char *image,
                             const char *name) {
    ++fake.loads;
    EXPECT_EQ(llvm::StringRef(image), getL2FlushKernelPtx());
    EXPECT_EQ(llvm::StringRef(name), kL2FlushKernelName);
    if (fake.loadResult)
      return fake.loadResult;
    *module = &fake;
    *function = &fake.launches;
    return 0;
  }
};

/// A module of no launches on the fake driver, on a 132-SM device with a
/// 1 MiB L2.
class FakeModule : public GpuModule {
public:
  explicit FakeModule(const GpuApi *table) {
    api = table;
    flushBytes = 2 << 20;
    multiprocessors = 132;
  }
};

std::unique_ptr<GpuRunner> createFakeRunner(const GpuApi &api,
                                            FakeModule &module) {
  std::vector<std::vector<HostBuffer>> sets(1);
  llvm::Expected<std::unique_ptr<GpuRunner>> runner =
      GpuRunner::create(module, {}, sets);
  EXPECT_TRUE(bool(runner)) << llvm::toString(runner.takeError());
  return runner ? std::move(*runner) : nullptr;
}

GpuApi makeFakeApi(bool canLoadPtx) {
  GpuApi api = makeGpuApi<FakeCalls>({"alloc", "h2d", "d2h", "d2d", "memset",
                                      "launch", "evc", "evr", "evt", "flush"});
  if (canLoadPtx)
    api.loadPtxFunction = FakeCalls::loadPtxFunction;
  return api;
}

TEST(L2FlushTest, RunnerFlushesByReadingWithTheKernel) {
  fake = FakeDriver();
  GpuApi api = makeFakeApi(true);
  FakeModule module(&api);
  std::unique_ptr<GpuRunner> runner = createFakeRunner(api, module);
  ASSERT_TRUE(runner);
  EXPECT_EQ(fake.loads, 1);
  EXPECT_TRUE(runner->flushesByReading());
  // The buffer is zeroed once, when it is allocated.
  ASSERT_EQ(fake.memsets.size(), 1u);
  GpuAddress buffer = fake.memsets[0].first;
  EXPECT_EQ(fake.memsets[0].second, 2u << 20);
  ASSERT_FALSE(bool(runner->flushL2()));
  ASSERT_FALSE(bool(runner->flushL2()));
  EXPECT_EQ(fake.memsets.size(), 1u) << "a flush wrote the buffer";
  ASSERT_EQ(fake.launches.size(), 2u);
  EXPECT_EQ(fake.launches[0].kernelName, kL2FlushKernelName);
  EXPECT_EQ(fake.launches[0].grid[0], 512u); // 2 MiB / 16 B / 256 threads
  EXPECT_EQ(fake.launches[0].block[0], 256u);
  EXPECT_EQ(fake.launchedAddress, buffer);
  EXPECT_EQ(fake.launchedVectors, (2u << 20) / 16);
  EXPECT_EQ(fake.launchedMagic, kL2FlushMagic);
}

TEST(L2FlushTest, RunnerFlushesWithMemsetWithoutTheKernel) {
  // HIP: no loadPtxFunction. CUDA: the PTX did not load (said on stderr).
  for (bool canLoadPtx : {false, true}) {
    fake = FakeDriver();
    fake.loadResult = 218; // CUDA_ERROR_INVALID_PTX
    GpuApi api = makeFakeApi(canLoadPtx);
    FakeModule module(&api);
    std::unique_ptr<GpuRunner> runner = createFakeRunner(api, module);
    ASSERT_TRUE(runner);
    EXPECT_EQ(fake.loads, canLoadPtx ? 1 : 0);
    EXPECT_FALSE(runner->flushesByReading());
    ASSERT_FALSE(bool(runner->flushL2()));
    EXPECT_TRUE(fake.launches.empty());
    ASSERT_EQ(fake.memsets.size(), 2u); // zeroing, then the flush
    EXPECT_EQ(fake.memsets[1], fake.memsets[0]);
  }
}

/// ptxas as the ptxas checks find it ($KE_PTXAS, PATH, the CUDA default).
std::string findAnyPtxas() {
  std::string ptxas = findPtxas();
  if (ptxas.empty() && llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    ptxas = "/usr/local/cuda/bin/ptxas";
  return ptxas;
}

TEST(L2FlushTest, PtxAssemblesForSm90AndKeepsItsLoads) {
  std::string ptxas = findAnyPtxas();
  if (ptxas.empty()) {
    if (std::getenv("KE_REQUIRE_PTXAS"))
      FAIL() << "no ptxas ($KE_PTXAS, PATH, /usr/local/cuda/bin)";
    GTEST_SKIP() << "no ptxas ($KE_PTXAS, PATH, /usr/local/cuda/bin): the "
                    "flush kernel's PTX is not assembled";
  }
  // assemblePtx runs findPtxas(), which reads $KE_PTXAS first; the other
  // tests in this process get the variable back as it was.
  const char *previous = std::getenv("KE_PTXAS");
  std::string saved = previous ? previous : "";
  setenv("KE_PTXAS", ptxas.c_str(), 1);
  std::string log;
  mlir::FailureOr<std::string> cubin =
      assemblePtx(getL2FlushKernelPtx(), "sm_90", log);
  if (previous)
    setenv("KE_PTXAS", saved.c_str(), 1);
  else
    unsetenv("KE_PTXAS");
  ASSERT_TRUE(mlir::succeeded(cubin)) << ptxas << ":\n" << log;
  EXPECT_FALSE(cubin->empty());
  llvm::SmallVector<PtxasKernelReport> reports = parsePtxasReport(log);
  ASSERT_EQ(reports.size(), 1u) << log;
  EXPECT_EQ(reports[0].kernelName, kL2FlushKernelName);
  EXPECT_EQ(reports[0].spillStoreBytes + reports[0].spillLoadBytes, 0u);
  // The loop survived: with the loads dropped (no store that depends on
  // them) ptxas keeps 4 registers; with them, 16.
  EXPECT_GE(reports[0].registers, 10u) << log;
}

} // namespace

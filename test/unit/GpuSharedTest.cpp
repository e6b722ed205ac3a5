//===- GpuSharedTest.cpp - What the CUDA and HIP runtimes share, no GPU ---===//
//
// The code CUDA and HIP share runs without a GPU on its own: opening a
// runtime library and resolving its symbols (on libm, which is not a GPU
// runtime), the device description's JSON, the device queries on fake
// calls, and loading a module's launches on a fake driver table. The
// runtimes' own tests (CudaRunnerTest.cpp, HipRunnerTest.cpp) check the
// same through openCudaDevice and openHipDevice, in child processes.
//
//===----------------------------------------------------------------------===//

// The library opener, the device queries and the driver table are private
// to lib/Runtime.
#include "../../lib/Runtime/GpuApi.h"
#include "../../lib/Runtime/GpuDeviceQueries.h"
#include "../../lib/Runtime/GpuLibrary.h"

#include "ke/Runtime/CudaRunner.h"
#include "ke/Runtime/GpuDevice.h"
#include "ke/Runtime/GpuRunner.h"
#include "ke/Runtime/HipRunner.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <map>

using namespace ke;

namespace {

//===----------------------------------------------------------------------===//
// Opening a runtime library
//===----------------------------------------------------------------------===//

const char *const kTestNames[] = {"/nonexistent/libfirst.so",
                                  "/nonexistent/libsecond.so"};

const GpuLibraryKind kTestLibrary = {"test runtime", "KE_TEST_GPU_LIBRARY",
                                     kTestNames, "tests need nothing",
                                     "an old test runtime?"};

/// Opens kTestLibrary with $KE_TEST_GPU_LIBRARY set to `library` (unset when
/// null); the error message, or "opened <name>".
std::string open(const char *library, llvm::ArrayRef<GpuSymbol> symbols) {
  if (library)
    setenv("KE_TEST_GPU_LIBRARY", library, 1);
  else
    unsetenv("KE_TEST_GPU_LIBRARY");
  llvm::Expected<std::string> opened = openGpuLibrary(kTestLibrary, symbols);
  unsetenv("KE_TEST_GPU_LIBRARY");
  if (!opened)
    return llvm::toString(opened.takeError());
  return "opened " + *opened;
}

TEST(GpuLibraryTest, NamesComeFromTheVariableOrTheDefaults) {
  unsetenv("KE_TEST_GPU_LIBRARY");
  EXPECT_EQ(
      getGpuLibraryNames(kTestLibrary),
      std::vector<std::string>(std::begin(kTestNames), std::end(kTestNames)));
  // An empty variable counts as unset.
  setenv("KE_TEST_GPU_LIBRARY", "", 1);
  EXPECT_EQ(getGpuLibraryNames(kTestLibrary).size(), 2u);
  setenv("KE_TEST_GPU_LIBRARY", "/opt/libmine.so", 1);
  EXPECT_EQ(getGpuLibraryNames(kTestLibrary),
            std::vector<std::string>{"/opt/libmine.so"});
  unsetenv("KE_TEST_GPU_LIBRARY");
}

TEST(GpuLibraryTest, MissingLibraryNamesEveryCandidateAndTheHint) {
  std::string message = open(nullptr, {});
  EXPECT_EQ(message.find("no test runtime (/nonexistent/libfirst.so, "
                         "/nonexistent/libsecond.so not found: "),
            0u)
      << message;
  // The reason given is the first candidate's.
  EXPECT_NE(message.find("libfirst.so: cannot open"), std::string::npos)
      << message;
  EXPECT_NE(message.find("); tests need nothing"), std::string::npos)
      << message;
}

TEST(GpuLibraryTest, SymbolsResolveWithTheirFallback) {
  double (*cosine)(double) = nullptr;
  double (*sine)(double) = nullptr;
  std::string message =
      open("libm.so.6", {{cosine, "cos"}, {sine, "ke_no_such_sine", "sin"}});
  EXPECT_EQ(message, "opened libm.so.6");
  ASSERT_TRUE(cosine && sine);
  EXPECT_EQ(cosine(0), 1.0);
  EXPECT_EQ(sine(0), 0.0);
}

TEST(GpuLibraryTest, MissingSymbolIsNamedByItsPreferredName) {
  double (*cosine)(double) = nullptr;
  int (*missing)() = nullptr;
  std::string message =
      open("libm.so.6",
           {{cosine, "cos"}, {missing, "ke_no_such_v2", "ke_no_such_either"}});
  EXPECT_EQ(message, "the test runtime libm.so.6 lacks ke_no_such_v2 (an old "
                     "test runtime?)");
  EXPECT_FALSE(missing);
}

TEST(GpuLibraryTest, LoadOnceKeepsTheFirstAnswer) {
  struct Table {
    int value = 7;
  };
  static int calls = 0;
  static Table table;
  auto open = []() -> llvm::Expected<const Table *> {
    ++calls;
    return &table;
  };
  for (int i = 0; i < 3; ++i) {
    llvm::Expected<const Table *> loaded = loadOnce<Table>(open);
    ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
    EXPECT_EQ((*loaded)->value, 7);
  }
  EXPECT_EQ(calls, 1);
}

//===----------------------------------------------------------------------===//
// The device description
//===----------------------------------------------------------------------===//

/// Sets every common field to something other than its default.
void fillCommon(GpuDeviceInfo &info) {
  info.ordinal = 3;
  info.name = "a device";
  info.multiprocessors = 132;
  info.maxThreadsPerBlock = 1024;
  info.l2CacheBytes = 60ull << 20;
  info.totalMemoryBytes = 141ull << 30;
  info.peakBandwidthBytesPerSecond = 4.8e12;
}

void expectCommonEqual(const GpuDeviceInfo &a, const GpuDeviceInfo &b) {
  EXPECT_EQ(a.ordinal, b.ordinal);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.multiprocessors, b.multiprocessors);
  EXPECT_EQ(a.maxThreadsPerBlock, b.maxThreadsPerBlock);
  EXPECT_EQ(a.l2CacheBytes, b.l2CacheBytes);
  EXPECT_EQ(a.totalMemoryBytes, b.totalMemoryBytes);
  EXPECT_EQ(a.peakBandwidthBytesPerSecond, b.peakBandwidthBytesPerSecond);
}

TEST(GpuDeviceInfoTest, CudaInfoRoundTripsEveryField) {
  CudaDeviceInfo info;
  fillCommon(info);
  info.computeMajor = 9;
  info.computeMinor = 0;
  info.sharedMemoryPerBlockOptinBytes = 227 * 1024;
  info.driverVersion = 13000;
  info.l2FlushKernelError = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  llvm::json::Value json = info.toJSON();
  const llvm::json::Object *o = json.getAsObject();
  ASSERT_TRUE(o);
  // The keys the probe's child writes and ke-opt's reports carry.
  for (const char *key :
       {"ordinal", "name", "chip", "compute_major", "compute_minor",
        "multiprocessors", "max_threads_per_block", "l2_cache_bytes",
        "total_memory_bytes", "shared_memory_per_block_optin_bytes",
        "peak_bandwidth_bytes_per_second", "driver_version",
        "l2_flush_kernel_error"})
    EXPECT_TRUE(o->get(key)) << key;
  EXPECT_EQ(o->size(), 13u);
  EXPECT_EQ(o->getString("chip").value_or(""), "sm_90");
  llvm::Expected<CudaDeviceInfo> back = CudaDeviceInfo::fromJSON(json);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  expectCommonEqual(*back, info);
  EXPECT_EQ(back->computeMajor, 9);
  EXPECT_EQ(back->sharedMemoryPerBlockOptinBytes,
            info.sharedMemoryPerBlockOptinBytes);
  EXPECT_EQ(back->driverVersion, 13000);
  EXPECT_EQ(back->l2FlushKernelError, info.l2FlushKernelError);
}

TEST(GpuDeviceInfoTest, HipInfoRoundTripsEveryField) {
  HipDeviceInfo info;
  fillCommon(info);
  info.gcnArchName = "gfx942:sramecc+:xnack-";
  info.warpSize = 64;
  info.sharedMemoryPerBlockBytes = 64 * 1024;
  info.runtimeVersion = 60241134;
  llvm::json::Value json = info.toJSON();
  const llvm::json::Object *o = json.getAsObject();
  ASSERT_TRUE(o);
  for (const char *key :
       {"ordinal", "name", "chip", "gcn_arch_name", "multiprocessors",
        "max_threads_per_block", "warp_size", "l2_cache_bytes",
        "total_memory_bytes", "shared_memory_per_block_bytes",
        "peak_bandwidth_bytes_per_second", "runtime_version"})
    EXPECT_TRUE(o->get(key)) << key;
  EXPECT_EQ(o->size(), 12u);
  EXPECT_EQ(o->getString("chip").value_or(""), "gfx942");
  llvm::Expected<HipDeviceInfo> back = HipDeviceInfo::fromJSON(json);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  expectCommonEqual(*back, info);
  EXPECT_EQ(back->gcnArchName, info.gcnArchName);
  EXPECT_EQ(back->warpSize, 64u);
  EXPECT_EQ(back->sharedMemoryPerBlockBytes, info.sharedMemoryPerBlockBytes);
  EXPECT_EQ(back->runtimeVersion, info.runtimeVersion);
}

TEST(GpuDeviceInfoTest, MalformedDescriptionsAreErrors) {
  llvm::Expected<CudaDeviceInfo> cuda =
      CudaDeviceInfo::fromJSON(llvm::json::Object{{"name", "x"}});
  ASSERT_FALSE(bool(cuda));
  EXPECT_EQ(llvm::toString(cuda.takeError()),
            "malformed CUDA device description");
  llvm::Expected<HipDeviceInfo> hip =
      HipDeviceInfo::fromJSON(llvm::json::Object{{"name", "x"}});
  ASSERT_FALSE(bool(hip));
  EXPECT_EQ(llvm::toString(hip.takeError()), "malformed AMD GPU description");
}

TEST(GpuDeviceInfoTest, PeakBandwidthIsDoubleDataRate) {
  // H100 SXM: 2619 MHz, 5120 bits.
  EXPECT_DOUBLE_EQ(GpuDeviceInfo::getPeakBandwidth(2619000, 5120),
                   2.0 * 2619e6 * 5120 / 8);
  EXPECT_EQ(GpuDeviceInfo::getPeakBandwidth(0, 5120), 0);
}

//===----------------------------------------------------------------------===//
// Asking a device
//===----------------------------------------------------------------------===//

/// A driver table whose calls do nothing; describe() names the result.
struct NoCalls {
  static int memAlloc(GpuAddress *, size_t) { return 0; }
  static int memFree(GpuAddress) { return 0; }
  static int copyToDevice(GpuAddress, const void *, size_t) { return 0; }
  static int copyToHost(void *, GpuAddress, size_t) { return 0; }
  static int copyOnDevice(GpuAddress, GpuAddress, size_t) { return 0; }
  static int memset(GpuAddress, unsigned char, size_t) { return 0; }
  static int moduleUnload(void *) { return 0; }
  /// Resolves every kernel but "missing" to its own name.
  static int getFunction(void **function, void *, const char *name) {
    if (llvm::StringRef(name) == "missing")
      return 500;
    *function = const_cast<char *>(name);
    return 0;
  }
  static int launch(void *, const GpuLaunch &, void **) { return 0; }
  static int eventCreate(void **) { return 0; }
  static int eventDestroy(void *) { return 0; }
  static int eventRecord(void *) { return 0; }
  static int eventSynchronize(void *) { return 0; }
  static int eventElapsedTime(float *, void *, void *) { return 0; }
  static std::string describe(int result) {
    return "ERROR_" + std::to_string(result);
  }
};

GpuApi makeNoApi() {
  return makeGpuApi<NoCalls>({"alloc", "h2d", "d2h", "d2d", "memset", "launch",
                              "evc", "evr", "evt", "flush"});
}

TEST(GpuDeviceQueriesTest, OrdinalOutOfRange) {
  EXPECT_FALSE(bool(checkDeviceOrdinal("CUDA device", 1, 2)));
  EXPECT_EQ(llvm::toString(checkDeviceOrdinal("CUDA device", 2, 2)),
            "no CUDA device #2 (this machine has 2)");
  EXPECT_EQ(llvm::toString(checkDeviceOrdinal("AMD GPU", -1, 1)),
            "no AMD GPU #-1 (this machine has 1)");
}

/// A fake device for GpuDeviceFunctions: attribute `number` is
/// `attributes[number]`, missing ones fail with 42; what was asked, in order.
struct FakeDevice {
  std::map<int, int> attributes;
  std::vector<std::string> asked;
} device;

int fakeGetName(char *name, int length, int ordinal) {
  device.asked.push_back("name " + std::to_string(length));
  std::strcpy(name, "NVIDIA H200");
  return ordinal == 5 ? 0 : 7;
}
int fakeGetAttribute(int *value, int number, int ordinal) {
  device.asked.push_back(std::to_string(number));
  if (!device.attributes.count(number))
    return 42;
  *value = device.attributes[number];
  return 0;
}
int fakeGetTotalMemory(size_t *bytes, int ordinal) {
  device.asked.push_back("memory");
  *bytes = size_t(80) << 30;
  return 0;
}
int fakeGetVersion(int *version) {
  device.asked.push_back("version");
  *version = 13000;
  return 0;
}

const GpuDeviceFunctions kFakeFunctions = {
    fakeGetName,       fakeGetAttribute,    fakeGetTotalMemory, fakeGetVersion,
    "getName",         "getAttribute",      "totalMem",         "version",
    /*memoryClock=*/4, /*memoryBusWidth=*/5};

TEST(GpuDeviceQueriesTest, NameAttributesBandwidthMemoryVersionInOrder) {
  GpuApi api = makeNoApi();
  device = FakeDevice();
  device.attributes = {{1, 9},       {2, 132},  {3, 50 << 20},
                       {4, 2619000}, {5, 5120}, {6, -1}};
  CudaDeviceInfo info;
  uint64_t negative = 0;
  const GpuDeviceAttribute attributes[] = {
      {1, "major", info.computeMajor},
      {2, "multiprocessors", info.multiprocessors},
      {3, "L2", info.l2CacheBytes},
      {6, "negative", negative}};
  llvm::Error error = queryDeviceInfo(api, kFakeFunctions, 5, attributes, info,
                                      info.driverVersion);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  // The name (255 characters at most), the attributes in order, the
  // bandwidth's two, the memory, the version.
  EXPECT_EQ(device.asked,
            (std::vector<std::string>{"name 255", "1", "2", "3", "6", "4", "5",
                                      "memory", "version"}));
  EXPECT_EQ(info.name, "NVIDIA H200");
  EXPECT_EQ(info.computeMajor, 9);
  EXPECT_EQ(info.multiprocessors, 132u);
  EXPECT_EQ(info.l2CacheBytes, 50u << 20);
  // An unsigned field takes the runtime's int as the unsigned it is.
  EXPECT_EQ(negative, 0xffffffffu);
  EXPECT_DOUBLE_EQ(info.peakBandwidthBytesPerSecond,
                   GpuDeviceInfo::getPeakBandwidth(2619000, 5120));
  EXPECT_EQ(info.totalMemoryBytes, uint64_t(80) << 30);
  EXPECT_EQ(info.driverVersion, 13000);
}

TEST(GpuDeviceQueriesTest, FirstFailureStopsAndIsNamed) {
  GpuApi api = makeNoApi();
  device = FakeDevice();
  device.attributes = {{2, 1}};
  HipDeviceInfo info;
  const GpuDeviceAttribute attributes[] = {{2, "compute units", info.warpSize},
                                           {99, "no such", info.warpSize},
                                           {1, "major", info.warpSize}};
  EXPECT_EQ(llvm::toString(queryDeviceInfo(api, kFakeFunctions, 5, attributes,
                                           info, info.runtimeVersion)),
            "getAttribute(no such): ERROR_42");
  EXPECT_EQ(device.asked, (std::vector<std::string>{"name 255", "2", "99"}));
  // The name's failure comes first.
  EXPECT_EQ(llvm::toString(queryDeviceInfo(api, kFakeFunctions, 0, attributes,
                                           info, info.runtimeVersion)),
            "getName: ERROR_7");
}

//===----------------------------------------------------------------------===//
// Loading a module's launches
//===----------------------------------------------------------------------===//

/// GpuModule's loading steps, in public.
class TestModule : public GpuModule {
public:
  explicit TestModule(const GpuApi *table) {
    api = table;
    module = this;
  }
  using GpuModule::checkImage;
  using GpuModule::checkSharedMemoryLimit;
  using GpuModule::getFlushBytes;
  using GpuModule::loadLaunches;
  const std::vector<void *> &getFunctions() const { return functions; }
};

GpuLaunch launchOf(const char *name, uint32_t sharedBytes = 0) {
  GpuLaunch launch;
  launch.kernelName = name;
  launch.grid = {4, 1, 1};
  launch.block = {128, 1, 1};
  launch.dynamicSharedMemoryBytes = sharedBytes;
  return launch;
}

TEST(GpuModuleTest, SmallHelpers) {
  EXPECT_EQ(TestModule::getFlushBytes(60ull << 20), 120ull << 20);
  EXPECT_EQ(TestModule::getFlushBytes(0), 64ull << 20);
  EXPECT_FALSE(bool(TestModule::checkImage("image")));
  EXPECT_EQ(llvm::toString(TestModule::checkImage("")),
            "the GPU binary is empty");
  EXPECT_FALSE(bool(TestModule::checkSharedMemoryLimit(
      launchOf("k", 64 * 1024), 64 * 1024, "LDS", "workgroup")));
  EXPECT_FALSE(bool(TestModule::checkSharedMemoryLimit(launchOf("k", 1 << 20),
                                                       0, "LDS", "workgroup")));
  EXPECT_EQ(llvm::toString(TestModule::checkSharedMemoryLimit(
                launchOf("k", 65537), 64 * 1024, "LDS", "workgroup")),
            "launch of k: 65537 bytes of dynamic LDS, the device allows 65536 "
            "per workgroup");
}

TEST(GpuModuleTest, LaunchesResolveCheckAndKeepTheirFunctions) {
  GpuApi api = makeNoApi();
  TestModule module(&api);
  GpuKernelBinary binary;
  binary.launches = {launchOf("first"), launchOf("second", 1024)};
  std::vector<std::string> checked;
  llvm::Error error = module.loadLaunches(
      binary, 1024, "getFunction", [&](const GpuLaunch &, void *f) {
        checked.push_back(static_cast<const char *>(f));
        return llvm::Error::success();
      });
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  EXPECT_EQ(checked, (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(module.getFunctions().size(), 2u);
}

TEST(GpuModuleTest, LaunchFailuresNameTheKernel) {
  GpuApi api = makeNoApi();
  auto load = [&](GpuLaunch launch, unsigned maxThreads) {
    TestModule module(&api);
    GpuKernelBinary binary;
    binary.launches = {launch};
    return llvm::toString(
        module.loadLaunches(binary, maxThreads, "cuModuleGetFunction",
                            [](const GpuLaunch &launch, void *) {
                              return TestModule::checkSharedMemoryLimit(
                                  launch, 1000, "LDS", "workgroup");
                            }));
  };
  EXPECT_EQ(load(launchOf("missing"), 1024),
            "cuModuleGetFunction('missing'): ERROR_500");
  EXPECT_EQ(load(launchOf("wide"), 64),
            "launch of wide: 128 threads per block, the device allows 64");
  EXPECT_EQ(load(launchOf("big", 4096), 1024),
            "launch of big: 4096 bytes of dynamic LDS, the device allows 1000 "
            "per workgroup");
}

} // namespace

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
  info.pciDomain = 0;
  info.pciBus = 0x19;
  info.pciDevice = 0;
  // As nvidia-smi names it; MPI runs name each rank's device by it.
  EXPECT_EQ(info.getPciBusId(), "0000:19:00.0");
  llvm::json::Value json = info.toJSON();
  const llvm::json::Object *o = json.getAsObject();
  ASSERT_TRUE(o);
  // The keys the probe's child writes and ke-opt's reports carry.
  for (const char *key :
       {"ordinal", "name", "chip", "compute_major", "compute_minor",
        "multiprocessors", "max_threads_per_block", "l2_cache_bytes",
        "total_memory_bytes", "shared_memory_per_block_optin_bytes",
        "peak_bandwidth_bytes_per_second", "driver_version",
        "l2_flush_kernel_error", "pci_domain", "pci_bus", "pci_device"})
    EXPECT_TRUE(o->get(key)) << key;
  EXPECT_EQ(o->size(), 16u);
  EXPECT_EQ(o->getString("chip").value_or(""), "sm_90");
  llvm::Expected<CudaDeviceInfo> back = CudaDeviceInfo::fromJSON(json);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  expectCommonEqual(*back, info);
  EXPECT_EQ(back->computeMajor, 9);
  EXPECT_EQ(back->sharedMemoryPerBlockOptinBytes,
            info.sharedMemoryPerBlockOptinBytes);
  EXPECT_EQ(back->driverVersion, 13000);
  EXPECT_EQ(back->l2FlushKernelError, info.l2FlushKernelError);
  EXPECT_EQ(back->getPciBusId(), "0000:19:00.0");
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
  // A required field of another type is as good as missing.
  cuda = CudaDeviceInfo::fromJSON(
      llvm::json::Object{{"name", "x"}, {"compute_major", "9"}});
  ASSERT_FALSE(bool(cuda));
  llvm::consumeError(cuda.takeError());
  // Optional fields may be missing: they keep their defaults.
  cuda = CudaDeviceInfo::fromJSON(
      llvm::json::Object{{"name", "x"}, {"compute_major", 8}});
  ASSERT_TRUE(bool(cuda)) << llvm::toString(cuda.takeError());
  EXPECT_EQ(cuda->getChip(), "sm_80");
  EXPECT_EQ(cuda->l2FlushKernelError, "");
  EXPECT_EQ(cuda->totalMemoryBytes, 0u);
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
  using GpuModule::loadLaunches;
  using GpuModule::SharedMemoryLimits;
  const std::vector<void *> &getFunctions() const { return functions; }
  uint64_t getFlushBytes() const { return flushBytes; }
  unsigned getMultiprocessors() const { return multiprocessors; }
};

/// Kernels opted in, with their bytes.
std::vector<std::pair<std::string, int>> optedIn;

int fakeOptIn(void *function, int bytes) {
  optedIn.push_back({static_cast<const char *>(function), bytes});
  return bytes == 99999 ? 1 : 0;
}

GpuApi makeOptInApi() {
  GpuApi api = makeNoApi();
  api.names.getFunction = "cuModuleGetFunction";
  api.names.optInSharedMemory = "cuFuncSetAttribute";
  api.optInSharedMemory = fakeOptIn;
  return api;
}

GpuLaunch launchOf(const char *name, uint32_t sharedBytes = 0) {
  GpuLaunch launch;
  launch.kernelName = name;
  launch.grid = {4, 1, 1};
  launch.block = {128, 1, 1};
  launch.dynamicSharedMemoryBytes = sharedBytes;
  return launch;
}

GpuDeviceInfo deviceInfo() {
  GpuDeviceInfo info;
  info.multiprocessors = 132;
  info.maxThreadsPerBlock = 1024;
  return info;
}

const TestModule::SharedMemoryLimits kCudaLimits = {48 * 1024, 227 * 1024,
                                                    "shared memory", "block"};
const TestModule::SharedMemoryLimits kHipLimits = {0, 64 * 1024, "LDS",
                                                   "workgroup"};

TEST(GpuModuleTest, EmptyImage) {
  EXPECT_FALSE(bool(TestModule::checkImage("image")));
  EXPECT_EQ(llvm::toString(TestModule::checkImage("")),
            "the GPU binary is empty");
}

TEST(GpuModuleTest, LaunchesResolveAndOptInBeyondTheDefault) {
  GpuApi api = makeOptInApi();
  TestModule module(&api);
  GpuKernelBinary binary;
  binary.launches = {launchOf("small", 48 * 1024), launchOf("big", 100000)};
  optedIn.clear();
  llvm::Error error =
      module.loadLaunches(binary, deviceInfo(), 60ull << 20, kCudaLimits);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  ASSERT_EQ(module.getFunctions().size(), 2u);
  EXPECT_EQ(static_cast<const char *>(module.getFunctions()[1]),
            std::string("big"));
  EXPECT_EQ(optedIn,
            (std::vector<std::pair<std::string, int>>{{"big", 100000}}));
  // Twice the cache; the device's multiprocessors size the flush kernel.
  EXPECT_EQ(module.getFlushBytes(), 120ull << 20);
  EXPECT_EQ(module.getMultiprocessors(), 132u);
}

TEST(GpuModuleTest, UnknownCacheFlushesSixtyFourMiB) {
  GpuApi api = makeOptInApi();
  TestModule module(&api);
  ASSERT_FALSE(bool(module.loadLaunches({}, deviceInfo(), 0, kHipLimits)));
  EXPECT_EQ(module.getFlushBytes(), 64ull << 20);
}

TEST(GpuModuleTest, LaunchFailuresNameTheKernel) {
  GpuApi api = makeOptInApi();
  auto load = [&](GpuLaunch launch,
                  const TestModule::SharedMemoryLimits &limits) {
    TestModule module(&api);
    GpuKernelBinary binary;
    binary.launches = {launch};
    return llvm::toString(module.loadLaunches(binary, deviceInfo(), 0, limits));
  };
  EXPECT_EQ(load(launchOf("missing"), kCudaLimits),
            "cuModuleGetFunction('missing'): ERROR_500");
  GpuLaunch wide = launchOf("wide");
  wide.block = {2048, 1, 1};
  EXPECT_EQ(load(wide, kCudaLimits),
            "launch of wide: 2048 threads per block, the device allows 1024");
  EXPECT_EQ(load(launchOf("big", 300000), kCudaLimits),
            "launch of big: 300000 bytes of dynamic shared memory, the "
            "device allows 232448 per block");
  EXPECT_EQ(load(launchOf("lds", 65537), kHipLimits),
            "launch of lds: 65537 bytes of dynamic LDS, the device allows "
            "65536 per workgroup");
  EXPECT_EQ(load(launchOf("refused", 99999), kCudaLimits),
            "cuFuncSetAttribute(max dynamic shared memory, refused): "
            "ERROR_1");
  // Without an opt-in (HIP), within the limit is enough.
  api.optInSharedMemory = nullptr;
  optedIn.clear();
  EXPECT_EQ(load(launchOf("lds", 65536), kHipLimits), "");
  EXPECT_TRUE(optedIn.empty());
}

} // namespace

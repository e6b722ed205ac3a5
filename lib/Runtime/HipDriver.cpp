//===- HipDriver.cpp - The HIP runtime API, loaded at run time ------------===//

#include "HipDriver.h"

#include "GpuLibrary.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace ke;
using namespace ke::hip;

namespace {

// The unversioned name comes with the -dev package only.
const char *const kRuntimeNames[] = {"libamdhip64.so.6", "libamdhip64.so.5",
                                     "libamdhip64.so"};

const GpuLibraryKind kRuntimeLibrary = {
    "HIP runtime", "KE_HIP_LIBRARY", kRuntimeNames,
    "rocm targets need a machine with an AMD GPU and ROCm, or KE_HIP_LIBRARY "
    "naming libamdhip64",
    "a runtime older than ROCm 5?"};

/// The table loadRuntime fills; the GpuApi adapters below call through it.
RuntimeApi runtime;

void *toPointer(GpuAddress address) {
  return reinterpret_cast<void *>(uintptr_t(address));
}

/// The runner's calls (GpuApi.h) on the HIP runtime. Launches pass
/// cuLaunchKernel's layout, kernelParams and no extra: the runtime reads each
/// parameter's size and offset from the code object's kernel metadata.
struct Calls
    : GpuHandleCalls<
          runtime, &RuntimeApi::hipModuleUnload,
          &RuntimeApi::hipModuleGetFunction, &RuntimeApi::hipModuleLaunchKernel,
          &RuntimeApi::hipEventDestroy, &RuntimeApi::hipEventRecord,
          &RuntimeApi::hipEventSynchronize, &RuntimeApi::hipEventElapsedTime> {
  static int memAlloc(GpuAddress *address, size_t bytes) {
    void *allocated = nullptr;
    hipError_t error = runtime.hipMalloc(&allocated, bytes);
    *address = reinterpret_cast<uintptr_t>(allocated);
    return error;
  }
  static int memFree(GpuAddress address) {
    return runtime.hipFree(toPointer(address));
  }
  static int copyToDevice(GpuAddress destination, const void *source,
                          size_t bytes) {
    return runtime.hipMemcpy(toPointer(destination), source, bytes,
                             hipMemcpyHostToDevice);
  }
  static int copyToHost(void *destination, GpuAddress source, size_t bytes) {
    return runtime.hipMemcpy(destination, toPointer(source), bytes,
                             hipMemcpyDeviceToHost);
  }
  static int copyOnDevice(GpuAddress destination, GpuAddress source,
                          size_t bytes) {
    return runtime.hipMemcpy(toPointer(destination), toPointer(source), bytes,
                             hipMemcpyDeviceToDevice);
  }
  static int memset(GpuAddress destination, unsigned char value, size_t bytes) {
    return runtime.hipMemset(toPointer(destination), value, bytes);
  }
  static int eventCreate(void **event) {
    hipEvent_t created = nullptr;
    hipError_t error = runtime.hipEventCreate(&created);
    *event = created;
    return error;
  }
  static std::string describe(int error) {
    return describeError(runtime, error);
  }
};

llvm::Expected<const RuntimeApi *> openRuntime() {
  RuntimeApi &api = runtime;
  const GpuSymbol symbols[] = {
      {api.hipInit, "hipInit"},
      {api.hipRuntimeGetVersion, "hipRuntimeGetVersion"},
      {api.hipGetErrorName, "hipGetErrorName"},
      {api.hipGetErrorString, "hipGetErrorString"},
      {api.hipGetDeviceCount, "hipGetDeviceCount"},
      {api.hipSetDevice, "hipSetDevice"},
      {api.hipDeviceGetName, "hipDeviceGetName"},
      {api.hipDeviceGetAttribute, "hipDeviceGetAttribute"},
      {api.hipDeviceTotalMem, "hipDeviceTotalMem"},
      // ROCm 6 headers bind the plain name to R0600; the plain symbol is
      // the ROCm 5 layout, kept for old binaries.
      {api.hipGetDeviceProperties, "hipGetDevicePropertiesR0600",
       "hipGetDeviceProperties"},
      {api.hipDeviceSynchronize, "hipDeviceSynchronize"},
      {api.hipModuleLoadData, "hipModuleLoadData"},
      {api.hipModuleUnload, "hipModuleUnload"},
      {api.hipModuleGetFunction, "hipModuleGetFunction"},
      {api.hipModuleLaunchKernel, "hipModuleLaunchKernel"},
      {api.hipMalloc, "hipMalloc"},
      {api.hipFree, "hipFree"},
      {api.hipMemcpy, "hipMemcpy"},
      {api.hipMemset, "hipMemset"},
      {api.hipEventCreate, "hipEventCreate"},
      {api.hipEventDestroy, "hipEventDestroy"},
      {api.hipEventRecord, "hipEventRecord"},
      {api.hipEventSynchronize, "hipEventSynchronize"},
      {api.hipEventElapsedTime, "hipEventElapsedTime"}};
  if (llvm::Expected<std::string> opened =
          openGpuLibrary(kRuntimeLibrary, symbols);
      !opened)
    return opened.takeError();
  api.gpu = makeGpuApi<Calls>(
      {"hipMalloc", "hipMemcpy (host to device)", "hipMemcpy (device to host)",
       "hipMemcpy", "hipMemset", "hipModuleLaunchKernel", "hipEventCreate",
       "hipEventRecord", "hipEventElapsedTime", "cache flush",
       "hipModuleGetFunction"});
  // No loadPtxFunction: hipModuleLoadData cannot JIT the PTX flush kernel,
  // so the cache flush stays a hipMemset (dirty lines; docs/gpu.md). No
  // optInSharedMemory: LDS is all there is.
  return &api;
}

} // namespace

llvm::Expected<const RuntimeApi *> hip::loadRuntime() {
  return loadOnce<RuntimeApi>(openRuntime);
}

std::string hip::describeError(const RuntimeApi &api, hipError_t error) {
  const char *name = api.hipGetErrorName(error);
  const char *text = api.hipGetErrorString(error);
  if (!name || !*name)
    return llvm::formatv("HIP error {0}", error).str();
  if (!text || !*text || llvm::StringRef(text) == name)
    return name;
  return llvm::formatv("{0} ({1})", name, text).str();
}

llvm::Expected<std::string> hip::getGcnArchName(const RuntimeApi &api,
                                                int ordinal) {
  // hipDeviceProp_t is 792 bytes in ROCm 5 and about 1.5 KiB in ROCm 6, and
  // gcnArchName moved between the layouts. Rather than declare both, ke
  // lets the runtime fill a buffer larger than either and takes the first
  // NUL-delimited string that is an AMDGPU processor name ("gfx" and a hex
  // digit); the device name before it is a marketing name ("AMD Instinct
  // MI300X"), or the processor name itself on old runtimes.
  std::vector<char> properties(16384, 0);
  if (llvm::Error error =
          api.gpu.check(api.hipGetDeviceProperties(properties.data(), ordinal),
                        "hipGetDeviceProperties"))
    return std::move(error);
  properties.back() = 0;
  for (size_t i = 0; i + 4 < properties.size(); ++i) {
    if (i > 0 && properties[i - 1] != 0)
      continue;
    llvm::StringRef text(properties.data() + i);
    if (text.starts_with("gfx") && text.size() > 3 && llvm::isHexDigit(text[3]))
      return text.str();
  }
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "hipGetDeviceProperties: no gfx processor name for device #%d", ordinal);
}

//===- HipDriver.cpp - The HIP runtime API, loaded at run time ------------===//

#include "HipDriver.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"

#include <dlfcn.h>

using namespace ke;
using namespace ke::hip;

std::vector<std::string> hip::getRuntimeLibraryNames() {
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("KE_HIP_LIBRARY"))
    if (!env->empty())
      return {*env};
  // The unversioned name comes with the -dev package only.
  return {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
}

namespace {

/// The table loadRuntime fills; the GpuApi adapters below call through it.
RuntimeApi runtime;

void *toPointer(GpuAddress address) {
  return reinterpret_cast<void *>(uintptr_t(address));
}

/// The runner's calls (GpuApi.h) on the HIP runtime.
struct Calls {
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
  static int moduleUnload(void *module) {
    return runtime.hipModuleUnload(static_cast<hipModule_t>(module));
  }
  static int launch(void *function, const GpuLaunch &launch,
                    void **parameters) {
    // cuLaunchKernel's layout: kernelParams, no extra; the runtime reads each
    // parameter's size and offset from the code object's kernel metadata.
    return runtime.hipModuleLaunchKernel(
        static_cast<hipFunction_t>(function), launch.grid[0], launch.grid[1],
        launch.grid[2], launch.block[0], launch.block[1], launch.block[2],
        launch.dynamicSharedMemoryBytes, nullptr, parameters, nullptr);
  }
  static int eventCreate(void **event) {
    hipEvent_t created = nullptr;
    hipError_t error = runtime.hipEventCreate(&created);
    *event = created;
    return error;
  }
  static int eventDestroy(void *event) {
    return runtime.hipEventDestroy(static_cast<hipEvent_t>(event));
  }
  static int eventRecord(void *event) {
    return runtime.hipEventRecord(static_cast<hipEvent_t>(event), nullptr);
  }
  static int eventSynchronize(void *event) {
    return runtime.hipEventSynchronize(static_cast<hipEvent_t>(event));
  }
  static int eventElapsedTime(float *milliseconds, void *start, void *stop) {
    return runtime.hipEventElapsedTime(milliseconds,
                                       static_cast<hipEvent_t>(start),
                                       static_cast<hipEvent_t>(stop));
  }
  static std::string describe(int error) {
    return describeError(runtime, error);
  }
};

llvm::Expected<const RuntimeApi *> openRuntime() {
  RuntimeApi &api = runtime;
  std::vector<std::string> names = getRuntimeLibraryNames();
  void *library = nullptr;
  std::string name, reasons;
  for (const std::string &candidate : names) {
    library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library) {
      name = candidate;
      break;
    }
    const char *reason = dlerror();
    if (reasons.empty())
      reasons = reason ? reason : "dlopen failed";
  }
  if (!library)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no HIP runtime (%s not found: %s); rocm targets need a machine with "
        "an AMD GPU and ROCm, or KE_HIP_LIBRARY naming libamdhip64",
        llvm::join(names, ", ").c_str(), reasons.c_str());
  std::string missing;
  bool ok =
      resolve(library, api.hipInit, {"hipInit"}, missing) &&
      resolve(library, api.hipRuntimeGetVersion, {"hipRuntimeGetVersion"},
              missing) &&
      resolve(library, api.hipGetErrorName, {"hipGetErrorName"}, missing) &&
      resolve(library, api.hipGetErrorString, {"hipGetErrorString"},
              missing) &&
      resolve(library, api.hipGetDeviceCount, {"hipGetDeviceCount"},
              missing) &&
      resolve(library, api.hipSetDevice, {"hipSetDevice"}, missing) &&
      resolve(library, api.hipDeviceGetName, {"hipDeviceGetName"}, missing) &&
      resolve(library, api.hipDeviceGetAttribute, {"hipDeviceGetAttribute"},
              missing) &&
      resolve(library, api.hipDeviceTotalMem, {"hipDeviceTotalMem"},
              missing) &&
      // ROCm 6 headers bind the plain name to R0600; the plain symbol is
      // the ROCm 5 layout, kept for old binaries.
      resolve(library, api.hipGetDeviceProperties,
              {"hipGetDevicePropertiesR0600", "hipGetDeviceProperties"},
              missing) &&
      resolve(library, api.hipDeviceSynchronize, {"hipDeviceSynchronize"},
              missing) &&
      resolve(library, api.hipModuleLoadData, {"hipModuleLoadData"},
              missing) &&
      resolve(library, api.hipModuleUnload, {"hipModuleUnload"}, missing) &&
      resolve(library, api.hipModuleGetFunction, {"hipModuleGetFunction"},
              missing) &&
      resolve(library, api.hipModuleLaunchKernel, {"hipModuleLaunchKernel"},
              missing) &&
      resolve(library, api.hipMalloc, {"hipMalloc"}, missing) &&
      resolve(library, api.hipFree, {"hipFree"}, missing) &&
      resolve(library, api.hipMemcpy, {"hipMemcpy"}, missing) &&
      resolve(library, api.hipMemset, {"hipMemset"}, missing) &&
      resolve(library, api.hipEventCreate, {"hipEventCreate"}, missing) &&
      resolve(library, api.hipEventDestroy, {"hipEventDestroy"}, missing) &&
      resolve(library, api.hipEventRecord, {"hipEventRecord"}, missing) &&
      resolve(library, api.hipEventSynchronize, {"hipEventSynchronize"},
              missing) &&
      resolve(library, api.hipEventElapsedTime, {"hipEventElapsedTime"},
              missing);
  if (!ok) {
    dlclose(library);
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the HIP runtime %s lacks %s (a runtime older than ROCm 5?)",
        name.c_str(), missing.c_str());
  }
  api.gpu = makeGpuApi<Calls>(
      {"hipMalloc", "hipMemcpy (host to device)", "hipMemcpy (device to host)",
       "hipMemcpy", "hipMemset", "hipModuleLaunchKernel", "hipEventCreate",
       "hipEventRecord", "hipEventElapsedTime", "cache flush"});
  // No loadPtxFunction: hipModuleLoadData cannot JIT the PTX flush kernel,
  // so the cache flush stays a hipMemset (dirty lines; docs/gpu.md).
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

llvm::Error hip::check(const RuntimeApi &api, hipError_t error,
                       llvm::StringRef what) {
  if (error == hipSuccess)
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 what + ": " + describeError(api, error));
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
  if (llvm::Error error = check(
          api, api.hipGetDeviceProperties(properties.data(), ordinal),
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

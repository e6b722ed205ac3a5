//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//

#include "CudaDriver.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"

#include <dlfcn.h>

using namespace ke;
using namespace ke::cuda;

std::string cuda::getDriverLibraryName() {
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("KE_CUDA_LIBRARY"))
    if (!env->empty())
      return *env;
  return "libcuda.so.1";
}

namespace {

/// The table loadDriver fills; the GpuApi adapters below call through it.
DriverApi driver;

/// The runner's calls (GpuApi.h) on the CUDA driver.
struct Calls {
  static int memAlloc(GpuAddress *address, size_t bytes) {
    CUdeviceptr allocated = 0;
    CUresult result = driver.cuMemAlloc(&allocated, bytes);
    *address = allocated;
    return result;
  }
  static int memFree(GpuAddress address) { return driver.cuMemFree(address); }
  static int copyToDevice(GpuAddress destination, const void *source,
                          size_t bytes) {
    return driver.cuMemcpyHtoD(destination, source, bytes);
  }
  static int copyToHost(void *destination, GpuAddress source, size_t bytes) {
    return driver.cuMemcpyDtoH(destination, source, bytes);
  }
  static int copyOnDevice(GpuAddress destination, GpuAddress source,
                          size_t bytes) {
    return driver.cuMemcpyDtoD(destination, source, bytes);
  }
  static int memset(GpuAddress destination, unsigned char value, size_t bytes) {
    return driver.cuMemsetD8(destination, value, bytes);
  }
  static int moduleUnload(void *module) {
    return driver.cuModuleUnload(static_cast<CUmodule>(module));
  }
  static int launch(void *function, const GpuLaunch &launch,
                    void **parameters) {
    return driver.cuLaunchKernel(
        static_cast<CUfunction>(function), launch.grid[0], launch.grid[1],
        launch.grid[2], launch.block[0], launch.block[1], launch.block[2],
        launch.dynamicSharedMemoryBytes, nullptr, parameters, nullptr);
  }
  static int eventCreate(void **event) {
    CUevent created = nullptr;
    CUresult result = driver.cuEventCreate(&created, 0);
    *event = created;
    return result;
  }
  static int eventDestroy(void *event) {
    return driver.cuEventDestroy(static_cast<CUevent>(event));
  }
  static int eventRecord(void *event) {
    return driver.cuEventRecord(static_cast<CUevent>(event), nullptr);
  }
  static int eventSynchronize(void *event) {
    return driver.cuEventSynchronize(static_cast<CUevent>(event));
  }
  static int eventElapsedTime(float *milliseconds, void *start, void *stop) {
    return driver.cuEventElapsedTime(milliseconds, static_cast<CUevent>(start),
                                     static_cast<CUevent>(stop));
  }
  static std::string describe(int result) {
    return describeResult(driver, result);
  }
  static int loadPtxFunction(void **module, void **function, const char *image,
                             const char *name) {
    CUmodule loaded = nullptr;
    CUresult result =
        driver.cuModuleLoadDataEx(&loaded, image, 0, nullptr, nullptr);
    if (result != CUDA_SUCCESS)
      return result;
    CUfunction resolved = nullptr;
    result = driver.cuModuleGetFunction(&resolved, loaded, name);
    if (result != CUDA_SUCCESS) {
      driver.cuModuleUnload(loaded);
      return result;
    }
    *module = loaded;
    *function = resolved;
    return CUDA_SUCCESS;
  }
};

llvm::Expected<const DriverApi *> openDriver() {
  DriverApi &api = driver;
  std::string name = getDriverLibraryName();
  void *library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no CUDA driver (%s not found: %s); CUDA targets need a machine with "
        "an NVIDIA GPU and its driver, or KE_CUDA_LIBRARY naming the driver "
        "library",
        name.c_str(), reason ? reason : "dlopen failed");
  }
  std::string missing;
  // cuda.h binds the plain names to these versions (CUDA 13); older drivers
  // export only the plain name of a few of them.
  bool ok =
      resolve(library, api.cuInit, {"cuInit"}, missing) &&
      resolve(library, api.cuDriverGetVersion, {"cuDriverGetVersion"},
              missing) &&
      resolve(library, api.cuGetErrorString, {"cuGetErrorString"}, missing) &&
      resolve(library, api.cuGetErrorName, {"cuGetErrorName"}, missing) &&
      resolve(library, api.cuDeviceGetCount, {"cuDeviceGetCount"}, missing) &&
      resolve(library, api.cuDeviceGet, {"cuDeviceGet"}, missing) &&
      resolve(library, api.cuDeviceGetName, {"cuDeviceGetName"}, missing) &&
      resolve(library, api.cuDeviceGetAttribute, {"cuDeviceGetAttribute"},
              missing) &&
      resolve(library, api.cuDeviceTotalMem, {"cuDeviceTotalMem_v2"},
              missing) &&
      resolve(library, api.cuDevicePrimaryCtxRetain,
              {"cuDevicePrimaryCtxRetain"}, missing) &&
      resolve(library, api.cuDevicePrimaryCtxRelease,
              {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
              missing) &&
      resolve(library, api.cuCtxSetCurrent, {"cuCtxSetCurrent"}, missing) &&
      resolve(library, api.cuCtxSynchronize, {"cuCtxSynchronize"}, missing) &&
      resolve(library, api.cuModuleLoadDataEx, {"cuModuleLoadDataEx"},
              missing) &&
      resolve(library, api.cuModuleUnload, {"cuModuleUnload"}, missing) &&
      resolve(library, api.cuModuleGetFunction, {"cuModuleGetFunction"},
              missing) &&
      resolve(library, api.cuFuncSetAttribute, {"cuFuncSetAttribute"},
              missing) &&
      resolve(library, api.cuLaunchKernel, {"cuLaunchKernel"}, missing) &&
      resolve(library, api.cuMemAlloc, {"cuMemAlloc_v2"}, missing) &&
      resolve(library, api.cuMemFree, {"cuMemFree_v2"}, missing) &&
      resolve(library, api.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, missing) &&
      resolve(library, api.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, missing) &&
      resolve(library, api.cuMemcpyDtoD, {"cuMemcpyDtoD_v2"}, missing) &&
      resolve(library, api.cuMemsetD8, {"cuMemsetD8_v2"}, missing) &&
      resolve(library, api.cuEventCreate, {"cuEventCreate"}, missing) &&
      resolve(library, api.cuEventDestroy,
              {"cuEventDestroy_v2", "cuEventDestroy"}, missing) &&
      resolve(library, api.cuEventRecord, {"cuEventRecord"}, missing) &&
      resolve(library, api.cuEventSynchronize, {"cuEventSynchronize"},
              missing) &&
      resolve(library, api.cuEventElapsedTime,
              {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, missing);
  if (!ok) {
    dlclose(library);
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the CUDA driver %s lacks %s (a driver older than CUDA 11?)",
        name.c_str(), missing.c_str());
  }
  api.gpu = makeGpuApi<Calls>({"cuMemAlloc", "cuMemcpyHtoD", "cuMemcpyDtoH",
                               "cuMemcpyDtoD", "cuMemsetD8", "cuLaunchKernel",
                               "cuEventCreate", "cuEventRecord",
                               "cuEventElapsedTime", "L2 flush"});
  // The L2 flush reads its buffer with a PTX kernel (ke/Runtime/L2Flush.h).
  api.gpu.loadPtxFunction = Calls::loadPtxFunction;
  return &api;
}

} // namespace

llvm::Expected<const DriverApi *> cuda::loadDriver() {
  return loadOnce<DriverApi>(openDriver);
}

std::string cuda::describeResult(const DriverApi &api, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (api.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = nullptr;
  if (api.cuGetErrorString(result, &text) != CUDA_SUCCESS || !text)
    text = nullptr;
  // The toolkit's link stub answers every call, these too, with its error.
  if (!name && result == 34)
    return "CUDA_ERROR_STUB_LIBRARY (a link stub, not the driver)";
  if (!name && result == CUDA_ERROR_NO_DEVICE)
    return "CUDA_ERROR_NO_DEVICE";
  if (!name)
    return llvm::formatv("CUDA error {0}", result).str();
  if (!text)
    return name;
  return llvm::formatv("{0} ({1})", name, text).str();
}

llvm::Error cuda::check(const DriverApi &api, CUresult result,
                        llvm::StringRef what) {
  if (result == CUDA_SUCCESS)
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 what + ": " + describeResult(api, result));
}

//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//

#include "CudaDriver.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"

#include <dlfcn.h>
#include <initializer_list>
#include <mutex>

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

/// Resolves the first of `names` the library exports into `function`.
template <typename Function>
bool resolve(void *library, Function &function,
             std::initializer_list<const char *> names,
             std::string &missing) {
  for (const char *name : names) {
    if (void *symbol = dlsym(library, name)) {
      function = reinterpret_cast<Function>(symbol);
      return true;
    }
  }
  missing = *names.begin();
  return false;
}

llvm::Expected<const DriverApi *> openDriver() {
  static DriverApi api;
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
  return &api;
}

} // namespace

llvm::Expected<const DriverApi *> cuda::loadDriver() {
  static std::once_flag once;
  static const DriverApi *api = nullptr;
  static std::string error;
  std::call_once(once, [] {
    llvm::Expected<const DriverApi *> opened = openDriver();
    if (opened)
      api = *opened;
    else
      error = llvm::toString(opened.takeError());
  });
  if (!api)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  return api;
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

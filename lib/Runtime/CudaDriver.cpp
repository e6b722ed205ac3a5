//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//

#include "CudaDriver.h"

#include "GpuLibrary.h"

#include "ke/Runtime/TensorMapEncoding.h"

#include "llvm/Support/FormatVariadic.h"

#include <dlfcn.h>

using namespace ke;
using namespace ke::cuda;

namespace {

const char *const kDriverNames[] = {"libcuda.so.1"};

const GpuLibraryKind kDriverLibrary = {
    "CUDA driver", "KE_CUDA_LIBRARY", kDriverNames,
    "CUDA targets need a machine with an NVIDIA GPU and its driver, or "
    "KE_CUDA_LIBRARY naming the driver library",
    "a driver older than CUDA 11?"};

/// The table loadDriver fills; the GpuApi adapters below call through it.
DriverApi driver;
/// cuTensorMapEncodeTiled, where the driver has it (CUDA 12.0 and later).
ke_tensor_map_encode_tiled_fn encodeTiled = nullptr;

/// The runner's calls (GpuApi.h) on the CUDA driver.
struct Calls
    : GpuHandleCalls<driver, &DriverApi::cuModuleUnload,
                     &DriverApi::cuModuleGetFunction,
                     &DriverApi::cuLaunchKernel, &DriverApi::cuEventDestroy,
                     &DriverApi::cuEventRecord, &DriverApi::cuEventSynchronize,
                     &DriverApi::cuEventElapsedTime> {
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
  static int eventCreate(void **event) {
    CUevent created = nullptr;
    CUresult result = driver.cuEventCreate(&created, 0);
    *event = created;
    return result;
  }
  static std::string describe(int result) {
    return describeResult(driver, result);
  }
  static int optInSharedMemory(void *function, int bytes) {
    return driver.cuFuncSetAttribute(
        static_cast<CUfunction>(function),
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
  }
  static int encodeTensorMap(void *encoded, const GpuTensorMap &map,
                             GpuAddress address) {
    return ke_encode_tensor_map(encodeTiled, encoded, int(map.dataType),
                                map.elementBytes, uint32_t(map.shape.size()),
                                map.shape.data(), map.box.data(),
                                map.swizzleBytes, address);
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
  // cuda.h binds the plain names to the _v2 versions (CUDA 13); older
  // drivers export only the plain name of a few of them.
  const GpuSymbol symbols[] = {
      {api.cuInit, "cuInit"},
      {api.cuDriverGetVersion, "cuDriverGetVersion"},
      {api.cuGetErrorString, "cuGetErrorString"},
      {api.cuGetErrorName, "cuGetErrorName"},
      {api.cuDeviceGetCount, "cuDeviceGetCount"},
      {api.cuDeviceGet, "cuDeviceGet"},
      {api.cuDeviceGetName, "cuDeviceGetName"},
      {api.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
      {api.cuDeviceTotalMem, "cuDeviceTotalMem_v2"},
      {api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
      {api.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
       "cuDevicePrimaryCtxRelease"},
      {api.cuCtxSetCurrent, "cuCtxSetCurrent"},
      {api.cuCtxSynchronize, "cuCtxSynchronize"},
      {api.cuModuleLoadDataEx, "cuModuleLoadDataEx"},
      {api.cuModuleUnload, "cuModuleUnload"},
      {api.cuModuleGetFunction, "cuModuleGetFunction"},
      {api.cuFuncSetAttribute, "cuFuncSetAttribute"},
      {api.cuLaunchKernel, "cuLaunchKernel"},
      {api.cuMemAlloc, "cuMemAlloc_v2"},
      {api.cuMemFree, "cuMemFree_v2"},
      {api.cuMemcpyHtoD, "cuMemcpyHtoD_v2"},
      {api.cuMemcpyDtoH, "cuMemcpyDtoH_v2"},
      {api.cuMemcpyDtoD, "cuMemcpyDtoD_v2"},
      {api.cuMemsetD8, "cuMemsetD8_v2"},
      {api.cuEventCreate, "cuEventCreate"},
      {api.cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy"},
      {api.cuEventRecord, "cuEventRecord"},
      {api.cuEventSynchronize, "cuEventSynchronize"},
      {api.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"}};
  llvm::Expected<std::string> opened = openGpuLibrary(kDriverLibrary, symbols);
  if (!opened)
    return opened.takeError();
  // Optional: only TMA copies (sm_90a GEMMs) need it; drivers before CUDA
  // 12.0 lack it, and the runner then refuses modules that use it.
  if (void *library = dlopen(opened->c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    encodeTiled = reinterpret_cast<ke_tensor_map_encode_tiled_fn>(
        dlsym(library, "cuTensorMapEncodeTiled"));
    dlclose(library);
  }
  api.gpu = makeGpuApi<Calls>({"cuMemAlloc", "cuMemcpyHtoD", "cuMemcpyDtoH",
                               "cuMemcpyDtoD", "cuMemsetD8", "cuLaunchKernel",
                               "cuEventCreate", "cuEventRecord",
                               "cuEventElapsedTime", "L2 flush",
                               "cuModuleGetFunction", "cuFuncSetAttribute",
                               "cuTensorMapEncodeTiled"});
  if (encodeTiled)
    api.gpu.encodeTensorMap = Calls::encodeTensorMap;
  // The L2 flush reads its buffer with a PTX kernel (ke/Runtime/L2Flush.h).
  api.gpu.loadPtxFunction = Calls::loadPtxFunction;
  api.gpu.optInSharedMemory = Calls::optInSharedMemory;
  return &api;
}

} // namespace

std::string cuda::getDriverLibraryName() {
  return getGpuLibraryNames(kDriverLibrary).front();
}

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

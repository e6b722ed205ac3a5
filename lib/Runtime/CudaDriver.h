//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// ke-opt is one static binary that must run on machines without a GPU, so it
// does not link libcuda: it opens libcuda.so.1 with dlopen the first time a
// CUDA device is asked for and looks up the few driver functions the runner
// uses. The types and constants below are the driver API's (cuda.h, CUDA 13);
// their values are part of the driver's stable ABI. Where the driver exports
// a versioned symbol (cuMemAlloc_v2, ...), that is the one cuda.h binds the
// plain name to, and the one looked up.
//
// Private to lib/Runtime.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_RUNTIME_CUDADRIVER_H
#define KE_LIB_RUNTIME_CUDADRIVER_H

#include "GpuApi.h"

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>

namespace ke::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;

// CUdevice_attribute values.
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33;
inline constexpr int CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34;
inline constexpr int CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36;
inline constexpr int CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37;
inline constexpr int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
inline constexpr int CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUfunction_attribute.
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

// CUjit_option.
inline constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
inline constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

/// The driver functions ke uses, resolved from libcuda.so.1.
struct DriverApi {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int *version);
  CUresult (*cuGetErrorString)(CUresult error, const char **text);
  CUresult (*cuGetErrorName)(CUresult error, const char **text);
  CUresult (*cuDeviceGetCount)(int *count);
  CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
  CUresult (*cuDeviceGetName)(char *name, int length, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int *value, int attribute,
                                   CUdevice device);
  CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule *module, const void *image,
                                 unsigned numOptions, int *options,
                                 void **optionValues);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuModuleGetFunction)(CUfunction *function, CUmodule module,
                                  const char *name);
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute,
                                 int value);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned gridX,
                             unsigned gridY, unsigned gridZ, unsigned blockX,
                             unsigned blockY, unsigned blockZ,
                             unsigned sharedMemoryBytes, CUstream stream,
                             void **parameters, void **extra);
  CUresult (*cuMemAlloc)(CUdeviceptr *pointer, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr pointer);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr destination, const void *source,
                           size_t bytes);
  CUresult (*cuMemcpyDtoH)(void *destination, CUdeviceptr source,
                           size_t bytes);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr destination, CUdeviceptr source,
                           size_t bytes);
  CUresult (*cuMemsetD8)(CUdeviceptr destination, unsigned char value,
                         size_t count);
  CUresult (*cuEventCreate)(CUevent *event, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent event);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float *milliseconds, CUevent start,
                                 CUevent end);
  /// The runner's calls (GpuApi.h), over the functions above.
  GpuApi gpu;
};

/// The library ke opens: $KE_CUDA_LIBRARY, else libcuda.so.1.
std::string getDriverLibraryName();

/// Opens the driver library and resolves every function, once per process;
/// later calls return the same table (or the same error). Does not call
/// cuInit. Fails with "no CUDA driver (<library> not found: ...)" or a
/// missing-symbol message.
llvm::Expected<const DriverApi *> loadDriver();

/// "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)". Errors
/// "`what`: <describeResult>": GpuApi::check on the table's `gpu`.
std::string describeResult(const DriverApi &api, CUresult result);

} // namespace ke::cuda

#endif // KE_LIB_RUNTIME_CUDADRIVER_H

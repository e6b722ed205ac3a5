//===- HipDriver.h - The HIP runtime API, loaded at run time ----*- C++ -*-===//
//
// ke-opt is one static binary that must run on machines without a GPU, so it
// does not link libamdhip64: it opens the HIP runtime with dlopen the first
// time an AMD GPU is asked for and looks up the few functions the runner
// uses. The types and constants below are HIP's (hip_runtime_api.h); their
// values have been stable since ROCm 5.0 (new attributes are appended).
//
// Private to lib/Runtime.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_RUNTIME_HIPDRIVER_H
#define KE_LIB_RUNTIME_HIPDRIVER_H

#include "GpuApi.h"

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace ke::hip {

using hipError_t = int;
using hipDevice_t = int;
using hipModule_t = struct ihipModule_t *;
using hipFunction_t = struct ihipModuleSymbol_t *;
using hipStream_t = struct ihipStream_t *;
using hipEvent_t = struct ihipEvent_t *;

inline constexpr hipError_t hipSuccess = 0;
inline constexpr hipError_t hipErrorNoDevice = 100;
inline constexpr hipError_t hipErrorInvalidDevice = 101;

// hipDeviceAttribute_t values.
inline constexpr int hipDeviceAttributeL2CacheSize = 19;
inline constexpr int hipDeviceAttributeMaxThreadsPerBlock = 56;
inline constexpr int hipDeviceAttributeMemoryBusWidth = 59;
inline constexpr int hipDeviceAttributeMemoryClockRate = 60;
inline constexpr int hipDeviceAttributeMultiprocessorCount = 63;
inline constexpr int hipDeviceAttributeMaxSharedMemoryPerBlock = 74;
inline constexpr int hipDeviceAttributeWarpSize = 87;

// hipMemcpyKind.
inline constexpr int hipMemcpyHostToDevice = 1;
inline constexpr int hipMemcpyDeviceToHost = 2;
inline constexpr int hipMemcpyDeviceToDevice = 3;

/// The runtime functions ke uses, resolved from libamdhip64.
struct RuntimeApi {
  hipError_t (*hipInit)(unsigned flags);
  hipError_t (*hipRuntimeGetVersion)(int *version);
  const char *(*hipGetErrorName)(hipError_t error);
  const char *(*hipGetErrorString)(hipError_t error);
  hipError_t (*hipGetDeviceCount)(int *count);
  hipError_t (*hipSetDevice)(int ordinal);
  hipError_t (*hipDeviceGetName)(char *name, int length, hipDevice_t device);
  hipError_t (*hipDeviceGetAttribute)(int *value, int attribute, int ordinal);
  hipError_t (*hipDeviceTotalMem)(size_t *bytes, hipDevice_t device);
  /// hipGetDevicePropertiesR0600 (ROCm 6 and later) or
  /// hipGetDeviceProperties (ROCm 5): the two fill different layouts of
  /// hipDeviceProp_t, which ke does not declare (see getGcnArchName).
  hipError_t (*hipGetDeviceProperties)(void *properties, int ordinal);
  hipError_t (*hipDeviceSynchronize)();
  hipError_t (*hipModuleLoadData)(hipModule_t *module, const void *image);
  hipError_t (*hipModuleUnload)(hipModule_t module);
  hipError_t (*hipModuleGetFunction)(hipFunction_t *function,
                                     hipModule_t module, const char *name);
  hipError_t (*hipModuleLaunchKernel)(
      hipFunction_t function, unsigned gridX, unsigned gridY, unsigned gridZ,
      unsigned blockX, unsigned blockY, unsigned blockZ,
      unsigned sharedMemoryBytes, hipStream_t stream, void **parameters,
      void **extra);
  hipError_t (*hipMalloc)(void **pointer, size_t bytes);
  hipError_t (*hipFree)(void *pointer);
  hipError_t (*hipMemcpy)(void *destination, const void *source, size_t bytes,
                          int kind);
  hipError_t (*hipMemset)(void *destination, int value, size_t bytes);
  hipError_t (*hipEventCreate)(hipEvent_t *event);
  hipError_t (*hipEventDestroy)(hipEvent_t event);
  hipError_t (*hipEventRecord)(hipEvent_t event, hipStream_t stream);
  hipError_t (*hipEventSynchronize)(hipEvent_t event);
  hipError_t (*hipEventElapsedTime)(float *milliseconds, hipEvent_t start,
                                    hipEvent_t end);
  /// The runner's calls (GpuApi.h), over the functions above.
  GpuApi gpu;
};

/// Opens the first library that loads and resolves every function, once per
/// process; later calls return the same table (or the same error). The
/// libraries, in order: $KE_HIP_LIBRARY alone when set, else
/// libamdhip64.so.6, libamdhip64.so.5, libamdhip64.so. Does not call
/// hipInit. Fails with "no HIP runtime (<libraries> not found: ...)" or
/// a missing-symbol message.
llvm::Expected<const RuntimeApi *> loadRuntime();

/// "hipErrorNoDevice (no ROCm-capable device is detected)". Errors
/// "`what`: <describeError>": GpuApi::check on the table's `gpu`.
std::string describeError(const RuntimeApi &api, hipError_t error);

/// The gcnArchName of device `ordinal` ("gfx942:sramecc+:xnack-"), read off
/// its hipDeviceProp_t.
llvm::Expected<std::string> getGcnArchName(const RuntimeApi &api, int ordinal);

} // namespace ke::hip

#endif // KE_LIB_RUNTIME_HIPDRIVER_H

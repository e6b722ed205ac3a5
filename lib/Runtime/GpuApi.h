//===- GpuApi.h - The driver calls the CUDA and HIP runners share -*- C++
//-*-===//
//
// The CUDA driver and the HIP runtime offer the same calls for what the
// runner does (allocate, copy, poison, launch, time with events), with
// different names, handle types and argument orders (and CUDA can also load
// the PTX of the L2 flush kernel, HIP cannot). CudaDriver and
// HipDriver fill one GpuApi each from the symbols they resolve, so that one
// GpuRunner (ke/Runtime/GpuRunner.h) serves both. Also here: the
// dlopen helpers both drivers use.
//
// Private to lib/Runtime.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_RUNTIME_GPUAPI_H
#define KE_LIB_RUNTIME_GPUAPI_H

#include "ke/Codegen/GpuKernel.h"

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <dlfcn.h>
#include <initializer_list>
#include <mutex>
#include <string>

namespace ke {

/// A device address: a CUdeviceptr, or HIP's void * as an integer.
using GpuAddress = uint64_t;

/// The calls of one GPU runtime, as plain functions over its loaded table.
/// Every call returns the runtime's result code, 0 on success.
struct GpuApi {
  /// How messages name each call: the driver function, and what it does
  /// where one function does several ("hipMemcpy (host to device)").
  struct Names {
    const char *memAlloc, *copyToDevice, *copyToHost, *copyOnDevice, *memset,
        *launch, *eventCreate, *eventRecord, *eventElapsedTime;
    /// What the cache-flush buffer is called: "L2 flush", "cache flush".
    const char *flush;
  } names;

  int (*memAlloc)(GpuAddress *address, size_t bytes);
  int (*memFree)(GpuAddress address);
  int (*copyToDevice)(GpuAddress destination, const void *source, size_t bytes);
  int (*copyToHost)(void *destination, GpuAddress source, size_t bytes);
  int (*copyOnDevice)(GpuAddress destination, GpuAddress source, size_t bytes);
  int (*memset)(GpuAddress destination, unsigned char value, size_t bytes);
  int (*moduleUnload)(void *module);
  /// On the default stream, `parameters` as kernelParams, no extra.
  int (*launch)(void *function, const GpuLaunch &launch, void **parameters);
  int (*eventCreate)(void **event);
  int (*eventDestroy)(void *event);
  /// On the default stream.
  int (*eventRecord)(void *event);
  int (*eventSynchronize)(void *event);
  int (*eventElapsedTime)(float *milliseconds, void *start, void *stop);
  /// "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
  std::string (*describe)(int result);
  /// Loads the PTX `image` (NUL-terminated; the driver JIT-compiles it for
  /// the device) and resolves its entry point `name`, for the read-only L2
  /// flush kernel (ke/Runtime/L2Flush.h). Null where the runtime cannot run
  /// that kernel, and the runner flushes with `memset` instead: HIP's
  /// hipModuleLoadData takes AMDGPU code objects only and cannot JIT PTX.
  int (*loadPtxFunction)(void **module, void **function, const char *image,
                         const char *name) = nullptr;

  /// An error "`what`: <describe>" when `result` is not 0.
  llvm::Error check(int result, const llvm::Twine &what) const {
    if (result == 0)
      return llvm::Error::success();
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what + ": " + describe(result));
  }
};

/// The GpuApi over `Calls`, a struct of static functions named and typed
/// like GpuApi's members (memAlloc, ..., describe); loadPtxFunction stays
/// null (the driver sets it where it has one).
template <typename Calls> GpuApi makeGpuApi(const GpuApi::Names &names) {
  return {names,
          Calls::memAlloc,
          Calls::memFree,
          Calls::copyToDevice,
          Calls::copyToHost,
          Calls::copyOnDevice,
          Calls::memset,
          Calls::moduleUnload,
          Calls::launch,
          Calls::eventCreate,
          Calls::eventDestroy,
          Calls::eventRecord,
          Calls::eventSynchronize,
          Calls::eventElapsedTime,
          Calls::describe};
}

/// Resolves the first of `names` the library exports into `function`;
/// otherwise sets `missing` to the first name.
template <typename Function>
bool resolve(void *library, Function &function,
             std::initializer_list<const char *> names, std::string &missing) {
  for (const char *name : names) {
    if (void *symbol = dlsym(library, name)) {
      function = reinterpret_cast<Function>(symbol);
      return true;
    }
  }
  missing = *names.begin();
  return false;
}

/// Calls `open` once per process (per Table); later calls return the same
/// table or the same error, so a missing driver is looked for once.
template <typename Table>
llvm::Expected<const Table *>
loadOnce(llvm::Expected<const Table *> (*open)()) {
  static std::once_flag once;
  static const Table *table = nullptr;
  static std::string error;
  std::call_once(once, [open] {
    llvm::Expected<const Table *> opened = open();
    if (opened)
      table = *opened;
    else
      error = llvm::toString(opened.takeError());
  });
  if (!table)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  return table;
}

} // namespace ke

#endif // KE_LIB_RUNTIME_GPUAPI_H

//===- GpuApi.h - The calls the CUDA and HIP runners share ------*- C++ -*-===//
//
// The CUDA driver and the HIP runtime offer the same calls for what the
// runner does (allocate, copy, poison, launch, time with events), with
// different names, handle types and argument orders (and CUDA can also load
// the PTX of the L2 flush kernel, HIP cannot). CudaDriver and
// HipDriver fill one GpuApi each from the symbols they resolve, so that one
// GpuRunner (ke/Runtime/GpuRunner.h) serves both. The calls that differ only
// in names and handle types are written once here too (GpuHandleCalls).
// Opening the libraries: GpuLibrary.h.
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
    /// "cuModuleGetFunction", "hipModuleGetFunction".
    const char *getFunction = nullptr;
    /// "cuFuncSetAttribute"; null where there is no optInSharedMemory.
    const char *optInSharedMemory = nullptr;
    /// "cuTensorMapEncodeTiled"; null where there is no encodeTensorMap.
    const char *encodeTensorMap = nullptr;
  } names;

  int (*memAlloc)(GpuAddress *address, size_t bytes);
  int (*memFree)(GpuAddress address);
  int (*copyToDevice)(GpuAddress destination, const void *source, size_t bytes);
  int (*copyToHost)(void *destination, GpuAddress source, size_t bytes);
  int (*copyOnDevice)(GpuAddress destination, GpuAddress source, size_t bytes);
  int (*memset)(GpuAddress destination, unsigned char value, size_t bytes);
  int (*moduleUnload)(void *module);
  /// Resolves the kernel `name` of a loaded module.
  int (*getFunction)(void **function, void *module, const char *name);
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
  /// Lets `function` use `bytes` of dynamic shared memory, more than a
  /// launch gets without asking (CUDA's 48 KiB). Null where there is no
  /// opt-in: on AMD GPUs, LDS is all there is.
  int (*optInSharedMemory)(void *function, int bytes) = nullptr;
  /// Encodes `map` over the buffer at `address` into the kTensorMapBytes at
  /// `encoded` (host memory, 64-byte aligned). Null where there is no TMA:
  /// HIP, and CUDA drivers before 12.0.
  int (*encodeTensorMap)(void *encoded, const GpuTensorMap &map,
                         GpuAddress address) = nullptr;

  /// An error "`what`: <describe>" when `result` is not 0.
  llvm::Error check(int result, const llvm::Twine &what) const {
    if (result == 0)
      return llvm::Error::success();
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what + ": " + describe(result));
  }
};

/// The GpuApi over `Calls`, a struct of static functions named and typed
/// like GpuApi's members (memAlloc, ..., describe); loadPtxFunction and
/// optInSharedMemory stay null (the driver sets them where it has them).
template <typename Calls> GpuApi makeGpuApi(const GpuApi::Names &names) {
  return {names,
          Calls::memAlloc,
          Calls::memFree,
          Calls::copyToDevice,
          Calls::copyToHost,
          Calls::copyOnDevice,
          Calls::memset,
          Calls::moduleUnload,
          Calls::getFunction,
          Calls::launch,
          Calls::eventCreate,
          Calls::eventDestroy,
          Calls::eventRecord,
          Calls::eventSynchronize,
          Calls::eventElapsedTime,
          Calls::describe};
}

/// Calls `function` with each of `arguments` cast to the type it takes
/// there: the void * handles GpuApi passes become the runtime's own
/// (CUevent, hipModule_t, ...), and nullptr its default stream.
template <typename Result, typename... Parameters, typename... Arguments>
int callWithHandles(Result (*function)(Parameters...), Arguments... arguments) {
  return function(static_cast<Parameters>(arguments)...);
}

/// Calls `getFunction` (cuModuleGetFunction, hipModuleGetFunction) and
/// returns the runtime's function handle as a void *.
template <typename Result, typename Function, typename Module>
int getFunctionAsPointer(Result (*getFunction)(Function *, Module,
                                               const char *),
                         void **function, void *module, const char *name) {
  Function resolved = nullptr;
  Result result = getFunction(&resolved, static_cast<Module>(module), name);
  *function = resolved;
  return result;
}

/// The GpuApi calls that are the same on both runtimes but for the function
/// called and its handle types: unloading a module and resolving its
/// kernels, launching on the default stream (cuLaunchKernel and
/// hipModuleLaunchKernel take the same arguments) and the events. `Table` is
/// the runtime's loaded table, the others pointers to its members; a
/// runtime's Calls derives from this and adds the calls that differ.
template <auto &Table, auto ModuleUnload, auto GetFunction, auto LaunchKernel,
          auto EventDestroy, auto EventRecord, auto EventSynchronize,
          auto EventElapsedTime>
struct GpuHandleCalls {
  static int moduleUnload(void *module) {
    return callWithHandles(Table.*ModuleUnload, module);
  }
  static int getFunction(void **function, void *module, const char *name) {
    return getFunctionAsPointer(Table.*GetFunction, function, module, name);
  }
  static int launch(void *function, const GpuLaunch &launch,
                    void **parameters) {
    return callWithHandles(
        Table.*LaunchKernel, function, launch.grid[0], launch.grid[1],
        launch.grid[2], launch.block[0], launch.block[1], launch.block[2],
        launch.dynamicSharedMemoryBytes, nullptr, parameters, nullptr);
  }
  static int eventDestroy(void *event) {
    return callWithHandles(Table.*EventDestroy, event);
  }
  static int eventRecord(void *event) {
    return callWithHandles(Table.*EventRecord, event, nullptr);
  }
  static int eventSynchronize(void *event) {
    return callWithHandles(Table.*EventSynchronize, event);
  }
  static int eventElapsedTime(float *milliseconds, void *start, void *stop) {
    return callWithHandles(Table.*EventElapsedTime, milliseconds, start, stop);
  }
};

} // namespace ke

#endif // KE_LIB_RUNTIME_GPUAPI_H

//===- HipRunner.h - Running lowered kernels on an AMD GPU ------*- C++ -*-===//
//
// Runs a GpuKernelBinary of format "hsaco" (ke/Codegen/RocdlPipeline.h) on
// an AMD GPU through the HIP runtime, which ke loads at run time
// (libamdhip64.so.6, .so.5 or .so; or $KE_HIP_LIBRARY): the same static
// ke-opt runs on machines without ROCm and says so. A HipRunner is the
// GpuRunner (ke/Runtime/GpuRunner.h) over the HIP runtime, as a CudaRunner
// is over the CUDA driver: HIP events time the launches, and the flush
// buffer is twice the last-level cache (Infinity Cache included).
//
// Like CUDA, HIP must be initialized in the process that uses it only: ke
// opens the device in forked children (probeHipDevice, the GpuEvaluator).
//
//===----------------------------------------------------------------------===//
#ifndef KE_RUNTIME_HIPRUNNER_H
#define KE_RUNTIME_HIPRUNNER_H

#include "ke/Runtime/GpuDevice.h"
#include "ke/Runtime/GpuRunner.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <string>
#include <vector>

namespace ke {
namespace hip {
struct RuntimeApi;
} // namespace hip

/// What ke reads off an AMD GPU: the common fields (GpuDeviceInfo, where
/// multiprocessors are compute units) and these.
struct HipDeviceInfo : GpuDeviceInfo {
  /// The processor with its target features: "gfx942:sramecc+:xnack-".
  std::string gcnArchName;
  unsigned warpSize = 0;
  /// LDS one workgroup may use.
  uint64_t sharedMemoryPerBlockBytes = 0;
  /// hipRuntimeGetVersion: major * 10000000 + minor * 100000 + patch.
  int runtimeVersion = 0;

  /// "gfx942": gcnArchName without its features.
  std::string getChip() const;
  llvm::json::Value toJSON() const;
  static llvm::Expected<HipDeviceInfo> fromJSON(const llvm::json::Value &v);
};

/// An open AMD GPU, current on this thread.
class HipDevice : public GpuDevice<HipDeviceInfo, hip::RuntimeApi> {
public:
  ~HipDevice();

  /// Waits for all work on the device; reports an error a kernel left.
  llvm::Error synchronize();

private:
  friend llvm::Expected<std::unique_ptr<HipDevice>> openHipDevice(int);
  HipDevice(const hip::RuntimeApi &api, int ordinal)
      : GpuDevice(api, ordinal) {}
};

/// Loads the runtime, initializes it and opens device `ordinal`. Fails with
/// "no HIP runtime (libamdhip64.so.6, ... not found: ...)", "no AMD GPU
/// (...)" or the runtime's error. Initializes HIP in this process: call it
/// in a child.
llvm::Expected<std::unique_ptr<HipDevice>> openHipDevice(int ordinal = 0);

/// Opens device `ordinal` in a forked child and returns what it reports, so
/// that this process stays free of HIP state. Same errors as openHipDevice,
/// or the child's failure (crash, timeout).
llvm::Expected<HipDeviceInfo> probeHipDevice(int ordinal = 0,
                                             double timeoutSeconds = 120);

/// The code object of a GpuKernelBinary, loaded: one function per launch.
class HipModule : public GpuModule {
public:
  /// Loads the HSACO (hipModuleLoadData) and resolves every launch's kernel.
  /// A failure here (a code object for another processor, ...) is a compile
  /// error of the candidate.
  static llvm::Expected<std::unique_ptr<HipModule>>
  load(HipDevice &device, const GpuKernelBinary &binary);

private:
  HipModule() = default;
};

/// A kernel module's buffers on an AMD GPU (GpuRunner over the runtime).
using HipRunner = GpuRunner;

} // namespace ke

#endif // KE_RUNTIME_HIPRUNNER_H

//===- CudaRunner.h - Running lowered kernels on an NVIDIA GPU --*- C++ -*-===//
//
// Runs a GpuKernelBinary (ke/Codegen/GpuKernel.h) on a CUDA device through
// the driver API, which ke loads at run time (libcuda.so.1, or
// $KE_CUDA_LIBRARY): the same static ke-opt runs on machines without a GPU
// and says so. The driver JIT-compiles PTX images when they are loaded
// (cubin images load as they are).
//
// A CudaRunner is the GpuRunner (ke/Runtime/GpuRunner.h) over the CUDA
// driver: it holds the device copies of a kernel module's buffers and times
// the launches with CUDA events; its flush buffer is twice the L2 cache.
//
// CUDA must be initialized in the process that uses it only: ke opens the
// device in forked children (probeCudaDevice, the GpuEvaluator), never in
// the parent, which would pass a broken CUDA state to every later fork.
//
//===----------------------------------------------------------------------===//
#ifndef KE_RUNTIME_CUDARUNNER_H
#define KE_RUNTIME_CUDARUNNER_H

#include "ke/Runtime/GpuDevice.h"
#include "ke/Runtime/GpuRunner.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <string>
#include <vector>

namespace ke {
namespace cuda {
struct DriverApi;
} // namespace cuda

/// What ke reads off a CUDA device: the common fields (GpuDeviceInfo) and
/// these.
struct CudaDeviceInfo : GpuDeviceInfo {
  int computeMajor = 0, computeMinor = 0;
  /// Shared memory one block may use with the opt-in carve-out.
  uint64_t sharedMemoryPerBlockOptinBytes = 0;
  /// cuDriverGetVersion: 13000 for CUDA 13.0.
  int driverVersion = 0;
  /// Where the device sits on the PCI bus (the ranks of an MPI run name
  /// their devices by it).
  int pciDomain = 0, pciBus = 0, pciDevice = 0;
  /// Why the runner's read-only L2 flush kernel (ke/Runtime/L2Flush.h) does
  /// not load on this device, so that the runner flushes with a memset;
  /// empty when it loads (or was not tried: only the probe tries it).
  std::string l2FlushKernelError;

  /// "sm_90".
  std::string getChip() const;
  /// "0000:19:00.0", as nvidia-smi writes it.
  std::string getPciBusId() const;
  llvm::json::Value toJSON() const;
  static llvm::Expected<CudaDeviceInfo> fromJSON(const llvm::json::Value &v);
};

/// An open CUDA device with its primary context current on this thread.
class CudaDevice : public GpuDevice<CudaDeviceInfo, cuda::DriverApi> {
public:
  ~CudaDevice();

  /// Waits for all work on the device; reports an error a kernel left.
  llvm::Error synchronize();
  /// Loads and unloads the runner's L2 flush kernel, and records in the
  /// info why it does not load, if it does not. probeCudaDevice calls it:
  /// the runner's own warning goes to a candidate child's stderr, which is
  /// /dev/null unless $KE_CHILD_STDERR is set.
  void checkL2FlushKernel();

private:
  friend llvm::Expected<std::unique_ptr<CudaDevice>> openCudaDevice(int);
  CudaDevice(const cuda::DriverApi &api, int ordinal)
      : GpuDevice(api, ordinal) {}

  int device = 0;
  void *context = nullptr;
};

/// Loads the driver, initializes it and opens device `ordinal`. Fails with
/// "no CUDA driver (libcuda.so.1 not found: ...)", "no CUDA device (...)" or
/// the driver's error. Initializes CUDA in this process: call it in a child.
llvm::Expected<std::unique_ptr<CudaDevice>> openCudaDevice(int ordinal = 0);

/// Opens device `ordinal` in a forked child and returns what it reports, so
/// that this process stays free of CUDA state. Same errors as
/// openCudaDevice, or the child's failure (crash, timeout). Warns on stderr,
/// once per process, when the L2 flush kernel does not load on the device
/// (CudaDevice::checkL2FlushKernel).
llvm::Expected<CudaDeviceInfo> probeCudaDevice(int ordinal = 0,
                                               double timeoutSeconds = 120);

/// The device code of a GpuKernelBinary, loaded: one function per launch.
class CudaModule : public GpuModule {
public:
  /// Loads the image (the driver JIT-compiles PTX; its error log comes back
  /// in the message), resolves every launch's kernel and opts in to the
  /// dynamic shared memory a launch asks for beyond 48 KiB. A failure here
  /// is a compile error of the candidate.
  static llvm::Expected<std::unique_ptr<CudaModule>>
  load(CudaDevice &device, const GpuKernelBinary &binary);

private:
  CudaModule() = default;
};

/// A kernel module's buffers on a CUDA device (GpuRunner over the driver).
using CudaRunner = GpuRunner;

} // namespace ke

#endif // KE_RUNTIME_CUDARUNNER_H

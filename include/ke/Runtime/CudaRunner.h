//===- CudaRunner.h - Running lowered kernels on an NVIDIA GPU --*- C++ -*-===//
//
// Runs a GpuKernelBinary (ke/Codegen/GpuKernel.h) on a CUDA device through
// the driver API, which ke loads at run time (libcuda.so.1, or
// $KE_CUDA_LIBRARY): the same static ke-opt runs on machines without a GPU
// and says so. The driver JIT-compiles PTX images when they are loaded
// (cubin images load as they are).
//
// A CudaRunner holds the device copies of a kernel module's buffers, one per
// argument, plus the input sets it rotates through, and times the launches
// by ke's measurement protocol (docs/measurement.md): CUDA events around the
// launches only; before every run, outside the timed region, the input set
// rotates, accumulators are restored, outputs and scratch poisoned, and the
// L2 cache flushed by writing a buffer twice its size.
//
// CUDA must be initialized in the process that uses it only: ke opens the
// device in forked children (probeCudaDevice, the GpuEvaluator), never in
// the parent, which would pass a broken CUDA state to every later fork.
//
//===----------------------------------------------------------------------===//
#ifndef KE_RUNTIME_CUDARUNNER_H
#define KE_RUNTIME_CUDARUNNER_H

#include "ke/Codegen/GpuKernel.h"
#include "ke/Runtime/HostBuffer.h"
#include "ke/Runtime/LaunchParameters.h"
#include "ke/Runtime/Measurement.h"
#include "ke/Workload/Kernel.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <string>
#include <vector>

namespace ke {
namespace cuda {
struct DriverApi;
} // namespace cuda

/// What ke reads off a CUDA device.
struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  int computeMajor = 0, computeMinor = 0;
  unsigned multiprocessors = 0;
  unsigned maxThreadsPerBlock = 0;
  uint64_t l2CacheBytes = 0;
  uint64_t totalMemoryBytes = 0;
  /// Shared memory one block may use with the opt-in carve-out.
  uint64_t sharedMemoryPerBlockOptinBytes = 0;
  /// Theoretical DRAM bandwidth from memory clock and bus width (0 when the
  /// driver does not report them).
  double peakBandwidthBytesPerSecond = 0;
  /// cuDriverGetVersion: 13000 for CUDA 13.0.
  int driverVersion = 0;

  /// "sm_90".
  std::string getChip() const;
  llvm::json::Value toJSON() const;
  static llvm::Expected<CudaDeviceInfo> fromJSON(const llvm::json::Value &v);
};

/// An open CUDA device with its primary context current on this thread.
class CudaDevice {
public:
  ~CudaDevice();
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  const CudaDeviceInfo &getInfo() const { return info; }
  const cuda::DriverApi &getApi() const { return *api; }
  /// Waits for all work on the device; reports an error a kernel left.
  llvm::Error synchronize();

private:
  friend llvm::Expected<std::unique_ptr<CudaDevice>> openCudaDevice(int);
  CudaDevice() = default;

  const cuda::DriverApi *api = nullptr;
  int device = 0;
  void *context = nullptr;
  CudaDeviceInfo info;
};

/// Loads the driver, initializes it and opens device `ordinal`. Fails with
/// "no CUDA driver (libcuda.so.1 not found: ...)", "no CUDA device (...)" or
/// the driver's error. Initializes CUDA in this process: call it in a child.
llvm::Expected<std::unique_ptr<CudaDevice>> openCudaDevice(int ordinal = 0);

/// Opens device `ordinal` in a forked child and returns what it reports, so
/// that this process stays free of CUDA state. Same errors as
/// openCudaDevice, or the child's failure (crash, timeout).
llvm::Expected<CudaDeviceInfo> probeCudaDevice(int ordinal = 0,
                                               double timeoutSeconds = 120);

/// The device code of a GpuKernelBinary, loaded: one function per launch.
class CudaModule {
public:
  ~CudaModule();
  /// Loads the image (the driver JIT-compiles PTX; its error log comes back
  /// in the message), resolves every launch's kernel and opts in to the
  /// dynamic shared memory a launch asks for beyond 48 KiB. A failure here
  /// is a compile error of the candidate.
  static llvm::Expected<std::unique_ptr<CudaModule>>
  load(CudaDevice &device, const GpuKernelBinary &binary);

private:
  friend class CudaRunner;
  CudaModule() = default;
  CudaDevice *device = nullptr;
  void *module = nullptr;
  std::vector<GpuLaunch> launches;
  std::vector<GpuScratchBuffer> scratch;
  std::vector<void *> functions;
};

/// A kernel module's buffers on one device, with its code, ready to run and
/// time. Buffers are indexed like KernelModule::arguments.
class CudaRunner {
public:
  ~CudaRunner();

  /// Allocates the buffers of `arguments` (the kernel module's) and uploads
  /// `inputSets` (each a full argument list; what they hold for outputs and
  /// scratch is not used). Fails when the launches do not fit the arguments
  /// (packLaunchArguments) or the device is out of memory.
  static llvm::Expected<std::unique_ptr<CudaRunner>>
  create(CudaModule &module, llvm::ArrayRef<KernelArgument> arguments,
         llvm::ArrayRef<std::vector<HostBuffer>> inputSets);

  /// Before a run, outside any timing: input set `set` (mod the number of
  /// sets) becomes current, accumulators are restored from it, outputs and
  /// scratch are poisoned (NaN for floats, 0x5A bytes for integers).
  llvm::Error prepare(unsigned set);
  /// Writes the L2 flush buffer (twice the device's L2 cache).
  llvm::Error flushL2();
  /// Launches every kernel in order between two events and waits for the
  /// second; returns the seconds between them. Reports a failed launch or a
  /// fault inside a kernel (illegal address, ...).
  llvm::Expected<double> runTimed();
  /// Copies the result buffers (accumulators and outputs) into `buffers`,
  /// a full argument list of host buffers.
  llvm::Error download(llvm::MutableArrayRef<HostBuffer> buffers);

  /// The protocol after a checked run, which was the warm-up: repeats until
  /// the floor; before each, prepare(firstSet + run), then flushL2().
  llvm::Expected<Measurement> measure(const MeasureOptions &options,
                                      unsigned firstSet = 1);

private:
  struct Buffers;
  CudaRunner() = default;
  CudaModule *module = nullptr;
  std::unique_ptr<Buffers> buffers;
  unsigned currentSet = 0;
};

} // namespace ke

#endif // KE_RUNTIME_CUDARUNNER_H

//===- GpuRunner.h - Running lowered kernels on a GPU -----------*- C++ -*-===//
//
// What the CUDA and HIP runners (ke/Runtime/CudaRunner.h, HipRunner.h)
// share: a loaded module of device code, and the runner that holds a kernel
// module's buffers on the device and times its launches by ke's measurement
// protocol (docs/measurement.md): device events around the launches only;
// before every run, outside the timed region, the input set rotates,
// accumulators are restored, outputs and scratch poisoned, and the caches
// flushed through a buffer twice their size: on CUDA by reading it with a
// small kernel (ke/Runtime/L2Flush.h), which leaves clean lines that the
// timed kernels drop for free; on HIP, which cannot load that kernel, by
// writing it (a memset, which leaves dirty lines). Each runtime fills a table
// of its driver calls (lib/Runtime/GpuApi.h) and loads its own modules
// (CudaModule, HipModule); the rest is this one code.
//
//===----------------------------------------------------------------------===//
#ifndef KE_RUNTIME_GPURUNNER_H
#define KE_RUNTIME_GPURUNNER_H

#include "ke/Codegen/GpuKernel.h"
#include "ke/Runtime/GpuDevice.h"
#include "ke/Runtime/HostBuffer.h"
#include "ke/Runtime/LaunchParameters.h"
#include "ke/Runtime/Measurement.h"
#include "ke/Workload/Kernel.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

namespace ke {
struct GpuApi;

/// The device code of a GpuKernelBinary, loaded: one function per launch.
/// CudaModule and HipModule load the image; loading the launches and
/// unloading are shared.
class GpuModule {
public:
  ~GpuModule();
  GpuModule(const GpuModule &) = delete;
  GpuModule &operator=(const GpuModule &) = delete;

protected:
  GpuModule() = default;
  /// Fails when `launch` has an empty grid or block, or more threads per
  /// block than the device's `maxThreadsPerBlock` (0: not known).
  static llvm::Error checkLaunchShape(const GpuLaunch &launch,
                                      unsigned maxThreadsPerBlock);
  /// Fails with "the GPU binary is empty" when `image` is.
  static llvm::Error checkImage(llvm::StringRef image);

  /// How a runtime bounds a launch's dynamic shared memory, and the words
  /// its messages use.
  struct SharedMemoryLimits {
    /// What a launch gets without opting in (GpuApi's optInSharedMemory):
    /// 48 KiB on CUDA, 0 on AMD GPUs, which have no opt-in.
    uint64_t withoutOptInBytes;
    /// The most one block may use (0: not known).
    uint64_t maxBytes;
    /// "shared memory" per "block", "LDS" per "workgroup".
    const char *memory, *unit;
  };

  /// With `api` and `module` set, for the device `info` describes: sizes
  /// the flush buffer to twice `lastLevelCacheBytes` (32 MiB when not
  /// known), takes `binary`'s launches and scratch buffers and, for each
  /// launch in order, resolves its kernel, checks its shape against the
  /// threads per block and, beyond what it gets without opting in, its
  /// dynamic shared memory against `limits`, then opts in where the
  /// runtime does. Fails with "<getFunction>('<kernel>'): ...", "launch of
  /// <kernel>: ..." or "<optInSharedMemory>(max dynamic shared memory,
  /// <kernel>): ...".
  llvm::Error loadLaunches(const GpuKernelBinary &binary,
                           const GpuDeviceInfo &info,
                           uint64_t lastLevelCacheBytes,
                           const SharedMemoryLimits &limits);

  friend class GpuRunner;
  const GpuApi *api = nullptr;
  void *module = nullptr;
  std::vector<GpuLaunch> launches;
  std::vector<GpuScratchBuffer> scratch;
  std::vector<GpuTensorMap> tensorMaps;
  std::vector<void *> functions;
  /// The size of the cache-flush buffer: twice the device's last cache.
  uint64_t flushBytes = 0;
  /// The device's multiprocessors, which size the flush kernel's grid (0:
  /// not known).
  unsigned multiprocessors = 0;
};

/// A kernel module's buffers on one device, with its code, ready to run and
/// time. Buffers are indexed like KernelModule::arguments.
class GpuRunner {
public:
  ~GpuRunner();

  /// Allocates the buffers of `arguments` (the kernel module's) and uploads
  /// `inputSets` (each a full argument list; what they hold for outputs and
  /// scratch is not used). Fails when the launches do not fit the arguments
  /// (packLaunchArguments) or the device is out of memory. Also allocates and
  /// zeroes the flush buffer and, where the runtime can (CUDA), loads the
  /// flush kernel; when that fails it says so once per process on stderr and
  /// flushes with a memset.
  static llvm::Expected<std::unique_ptr<GpuRunner>>
  create(GpuModule &module, llvm::ArrayRef<KernelArgument> arguments,
         llvm::ArrayRef<std::vector<HostBuffer>> inputSets);

  /// Runs `module`'s code from now on, on the same buffers and input sets:
  /// its scratch buffers replace the last module's, its launches are packed
  /// for every set. `module` (of this runner's device and kernel module)
  /// must outlive its use; the measuring server (docs/tuning.md) loads one
  /// per candidate without uploading the input sets again.
  llvm::Error setModule(GpuModule &module);

  /// Before a run, outside any timing: input set `set` (mod the number of
  /// sets) becomes current, accumulators are restored from it, outputs and
  /// scratch are poisoned (NaN for floats, 0x5A bytes for integers).
  llvm::Error prepare(unsigned set);
  /// Evicts the last-level cache, outside any timing, in stream order: the
  /// flush kernel reads the flush buffer (twice the cache), leaving clean
  /// lines; without the kernel (HIP, or the PTX did not load) a memset writes
  /// it, leaving dirty lines that the next run pays to write back.
  llvm::Error flushL2();
  /// True when flushL2 reads the flush buffer, false when it writes it.
  bool flushesByReading() const;
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
  GpuRunner() = default;
  GpuModule *module = nullptr;
  std::unique_ptr<Buffers> buffers;
  unsigned currentSet = 0;
};

} // namespace ke

#endif // KE_RUNTIME_GPURUNNER_H

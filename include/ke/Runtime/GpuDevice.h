//===- GpuDevice.h - What CUDA and HIP devices share ------------*- C++ -*-===//
//
// A CUDA device and an AMD GPU are described by the same core fields (name,
// multiprocessors, caches, memory, bandwidth), which the probe's child
// writes to the same JSON keys, and an open device of either kind holds its
// runtime's table and that description the same way. CudaDeviceInfo and
// HipDeviceInfo (ke/Runtime/CudaRunner.h, HipRunner.h) add what only their
// runtime reports; the common part is written once here.
//
//===----------------------------------------------------------------------===//
#ifndef KE_RUNTIME_GPUDEVICE_H
#define KE_RUNTIME_GPUDEVICE_H

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>

namespace ke {

/// What ke reads off any GPU; CudaDeviceInfo and HipDeviceInfo derive.
struct GpuDeviceInfo {
  int ordinal = 0;
  /// "NVIDIA H200", "AMD Instinct MI300X".
  std::string name;
  /// Streaming multiprocessors (CUDA) or compute units (AMD).
  unsigned multiprocessors = 0;
  unsigned maxThreadsPerBlock = 0;
  uint64_t l2CacheBytes = 0;
  uint64_t totalMemoryBytes = 0;
  /// Theoretical DRAM bandwidth from memory clock and bus width (0 when the
  /// runtime does not report them).
  double peakBandwidthBytesPerSecond = 0;

  /// Bytes per second from the memory clock in kHz and the bus width in
  /// bits, at double data rate.
  static double getPeakBandwidth(int memoryClockKHz, int memoryBusWidthBits);

protected:
  /// The fields above as JSON ("ordinal", "name", "multiprocessors",
  /// "max_threads_per_block", "l2_cache_bytes", "total_memory_bytes",
  /// "peak_bandwidth_bytes_per_second") and `chip` as "chip", to which each
  /// runtime adds its own.
  llvm::json::Object toCommonJSON(std::string chip) const;
  /// Reads the fields above from `value` into `info`, 0 where one is
  /// missing; returns the object to read the rest from, or null when
  /// `value` is not an object with a "name".
  static const llvm::json::Object *
  readCommonJSON(const llvm::json::Value &value, GpuDeviceInfo &info);
};

/// An open GPU: the runtime's table `Api` and what it reports, `Info`.
/// CudaDevice and HipDevice derive and add what their runtime needs.
template <typename Info, typename Api> class GpuDevice {
public:
  GpuDevice(const GpuDevice &) = delete;
  GpuDevice &operator=(const GpuDevice &) = delete;

  const Info &getInfo() const { return info; }
  const Api &getApi() const { return *api; }

protected:
  GpuDevice(const Api &api, int ordinal) : api(&api) { info.ordinal = ordinal; }
  ~GpuDevice() = default;

  const Api *api = nullptr;
  Info info;
};

} // namespace ke

#endif // KE_RUNTIME_GPUDEVICE_H

//===- GpuDevice.cpp - What CUDA and HIP devices share --------------------===//

#include "ke/Runtime/GpuDevice.h"

using namespace ke;

double GpuDeviceInfo::getPeakBandwidth(int memoryClockKHz,
                                       int memoryBusWidthBits) {
  // kHz, double data rate, bits: bytes per second.
  return 2.0 * double(memoryClockKHz) * 1e3 * double(memoryBusWidthBits) / 8.0;
}

llvm::json::Object GpuDeviceInfo::toCommonJSON() const {
  return llvm::json::Object{
      {"ordinal", ordinal},
      {"name", name},
      {"multiprocessors", multiprocessors},
      {"max_threads_per_block", maxThreadsPerBlock},
      {"l2_cache_bytes", l2CacheBytes},
      {"total_memory_bytes", totalMemoryBytes},
      {"peak_bandwidth_bytes_per_second", peakBandwidthBytesPerSecond}};
}

void GpuDeviceInfo::readCommonJSON(const llvm::json::Object &o) {
  ordinal = int(o.getInteger("ordinal").value_or(0));
  name = o.getString("name").value_or("").str();
  multiprocessors = unsigned(o.getInteger("multiprocessors").value_or(0));
  maxThreadsPerBlock =
      unsigned(o.getInteger("max_threads_per_block").value_or(0));
  l2CacheBytes = uint64_t(o.getInteger("l2_cache_bytes").value_or(0));
  totalMemoryBytes = uint64_t(o.getInteger("total_memory_bytes").value_or(0));
  peakBandwidthBytesPerSecond =
      o.getNumber("peak_bandwidth_bytes_per_second").value_or(0);
}

//===- GpuDevice.cpp - What CUDA and HIP devices share --------------------===//

#include "ke/Runtime/GpuDevice.h"

using namespace ke;

double GpuDeviceInfo::getPeakBandwidth(int memoryClockKHz,
                                       int memoryBusWidthBits) {
  // kHz, double data rate, bits: bytes per second.
  return 2.0 * double(memoryClockKHz) * 1e3 * double(memoryBusWidthBits) / 8.0;
}

llvm::json::Object GpuDeviceInfo::toCommonJSON(std::string chip) const {
  return llvm::json::Object{
      {"ordinal", ordinal},
      {"name", name},
      {"chip", std::move(chip)},
      {"multiprocessors", multiprocessors},
      {"max_threads_per_block", maxThreadsPerBlock},
      {"l2_cache_bytes", l2CacheBytes},
      {"total_memory_bytes", totalMemoryBytes},
      {"peak_bandwidth_bytes_per_second", peakBandwidthBytesPerSecond}};
}

const llvm::json::Object *
GpuDeviceInfo::readCommonJSON(const llvm::json::Value &value,
                              GpuDeviceInfo &info) {
  const llvm::json::Object *o = value.getAsObject();
  if (!o || !o->getString("name"))
    return nullptr;
  info.ordinal = int(o->getInteger("ordinal").value_or(0));
  info.name = o->getString("name")->str();
  info.multiprocessors = unsigned(o->getInteger("multiprocessors").value_or(0));
  info.maxThreadsPerBlock =
      unsigned(o->getInteger("max_threads_per_block").value_or(0));
  info.l2CacheBytes = uint64_t(o->getInteger("l2_cache_bytes").value_or(0));
  info.totalMemoryBytes =
      uint64_t(o->getInteger("total_memory_bytes").value_or(0));
  info.peakBandwidthBytesPerSecond =
      o->getNumber("peak_bandwidth_bytes_per_second").value_or(0);
  return o;
}

//===- GpuDevice.cpp - What CUDA and HIP devices share --------------------===//

#include "ke/Runtime/GpuDevice.h"

using namespace ke;

double GpuDeviceInfo::getPeakBandwidth(int memoryClockKHz,
                                       int memoryBusWidthBits) {
  // kHz, double data rate, bits: bytes per second.
  return 2.0 * double(memoryClockKHz) * 1e3 * double(memoryBusWidthBits) / 8.0;
}

bool GpuInfoField::isIn(const llvm::json::Object &o) const {
  const llvm::json::Value *value = o.get(key);
  return value && fromValue(nullptr, *value);
}

void GpuInfoField::read(const llvm::json::Object &o) const {
  if (const llvm::json::Value *value = o.get(key))
    fromValue(target, *value);
}

llvm::json::Value
GpuDeviceInfo::toJSONWith(std::string chip,
                          llvm::ArrayRef<GpuInfoField> own) const {
  llvm::json::Object o{
      {"ordinal", ordinal},
      {"name", name},
      {"chip", std::move(chip)},
      {"multiprocessors", multiprocessors},
      {"max_threads_per_block", maxThreadsPerBlock},
      {"l2_cache_bytes", l2CacheBytes},
      {"total_memory_bytes", totalMemoryBytes},
      {"peak_bandwidth_bytes_per_second", peakBandwidthBytesPerSecond}};
  for (const GpuInfoField &field : own)
    field.write(o);
  return o;
}

bool GpuDeviceInfo::readJSONWith(const llvm::json::Value &value,
                                 GpuDeviceInfo &info,
                                 llvm::ArrayRef<GpuInfoField> own) {
  const llvm::json::Object *o = value.getAsObject();
  if (!o || !o->getString("name"))
    return false;
  for (const GpuInfoField &field : own)
    if (field.isRequired() && !field.isIn(*o))
      return false;
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
  for (const GpuInfoField &field : own)
    field.read(*o);
  return true;
}

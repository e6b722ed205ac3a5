//===- GpuDeviceQueries.cpp - Reading a GPU's description -----------------===//

#include "GpuDeviceQueries.h"

#include "llvm/Support/FormatVariadic.h"

using namespace ke;

llvm::Error ke::checkDeviceOrdinal(llvm::StringRef what, int ordinal,
                                   int count) {
  if (ordinal >= 0 && ordinal < count)
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("no {0} #{1} (this machine has {2})", what, ordinal, count)
          .str());
}

llvm::Expected<std::string>
ke::queryDeviceName(const GpuApi &api, llvm::StringRef function,
                    llvm::function_ref<int(char *name, int length)> getName) {
  char name[256] = {0};
  if (llvm::Error error = api.check(getName(name, sizeof(name) - 1), function))
    return std::move(error);
  return std::string(name);
}

/// Reads `attributes` in order into their fields.
static llvm::Error
queryAttributes(const GpuApi &api, const GpuDeviceCalls &calls,
                llvm::ArrayRef<GpuDeviceAttribute> attributes) {
  for (const GpuDeviceAttribute &attribute : attributes) {
    int value = 0;
    if (llvm::Error error = api.check(
            calls.getAttribute(&value, attribute.number),
            llvm::formatv("{0}({1})", calls.getAttributeName, attribute.what)))
      return error;
    attribute.set(value);
  }
  return llvm::Error::success();
}

llvm::Error ke::queryDeviceInfo(const GpuApi &api, const GpuDeviceCalls &calls,
                                llvm::ArrayRef<GpuDeviceAttribute> attributes,
                                GpuDeviceInfo &info) {
  int memoryClockKHz = 0, memoryBusWidthBits = 0;
  const GpuDeviceAttribute bandwidth[] = {
      {calls.memoryClockAttribute, "memory clock", memoryClockKHz},
      {calls.memoryBusWidthAttribute, "memory bus width", memoryBusWidthBits}};
  if (llvm::Error error = queryAttributes(api, calls, attributes))
    return error;
  if (llvm::Error error = queryAttributes(api, calls, bandwidth))
    return error;
  info.peakBandwidthBytesPerSecond =
      GpuDeviceInfo::getPeakBandwidth(memoryClockKHz, memoryBusWidthBits);
  size_t totalMemory = 0;
  if (llvm::Error error = api.check(calls.getTotalMemory(&totalMemory),
                                    calls.getTotalMemoryName))
    return error;
  info.totalMemoryBytes = totalMemory;
  return llvm::Error::success();
}

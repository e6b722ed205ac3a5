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

/// Reads `attributes` of `device` in order into their fields.
static llvm::Error
queryAttributes(const GpuApi &api, const GpuDeviceFunctions &functions,
                int device, llvm::ArrayRef<GpuDeviceAttribute> attributes) {
  for (const GpuDeviceAttribute &attribute : attributes) {
    int value = 0;
    if (llvm::Error error =
            api.check(functions.getAttribute(&value, attribute.number, device),
                      llvm::formatv("{0}({1})", functions.getAttributeName,
                                    attribute.what)))
      return error;
    attribute.set(value);
  }
  return llvm::Error::success();
}

llvm::Error ke::queryDeviceInfo(const GpuApi &api,
                                const GpuDeviceFunctions &functions, int device,
                                llvm::ArrayRef<GpuDeviceAttribute> attributes,
                                GpuDeviceInfo &info, int &version) {
  char name[256] = {0};
  if (llvm::Error error =
          api.check(functions.getName(name, sizeof(name) - 1, device),
                    functions.getNameName))
    return error;
  info.name = name;
  int memoryClockKHz = 0, memoryBusWidthBits = 0;
  const GpuDeviceAttribute bandwidth[] = {
      {functions.memoryClockAttribute, "memory clock", memoryClockKHz},
      {functions.memoryBusWidthAttribute, "memory bus width",
       memoryBusWidthBits}};
  if (llvm::Error error = queryAttributes(api, functions, device, attributes))
    return error;
  if (llvm::Error error = queryAttributes(api, functions, device, bandwidth))
    return error;
  info.peakBandwidthBytesPerSecond =
      GpuDeviceInfo::getPeakBandwidth(memoryClockKHz, memoryBusWidthBits);
  size_t totalMemory = 0;
  if (llvm::Error error =
          api.check(functions.getTotalMemory(&totalMemory, device),
                    functions.getTotalMemoryName))
    return error;
  info.totalMemoryBytes = totalMemory;
  return api.check(functions.getVersion(&version), functions.getVersionName);
}

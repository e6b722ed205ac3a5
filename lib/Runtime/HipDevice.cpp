//===- HipDevice.cpp - Opening and probing AMD GPUs -----------------------===//

#include "ke/Runtime/HipRunner.h"

#include "GpuDeviceQueries.h"
#include "GpuProbe.h"
#include "HipDriver.h"

#include "llvm/Support/FormatVariadic.h"

#include <array>

using namespace ke;
using namespace ke::hip;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string HipDeviceInfo::getChip() const {
  return llvm::StringRef(gcnArchName).split(':').first.str();
}

/// HipDeviceInfo's own JSON keys (GpuDeviceInfo has the common ones), for
/// writing (`Info` const) and reading.
template <typename Info>
static std::array<GpuInfoField, 4> getOwnFields(Info &info) {
  return {{{"gcn_arch_name", info.gcnArchName, /*required=*/true},
           {"warp_size", info.warpSize},
           {"shared_memory_per_block_bytes", info.sharedMemoryPerBlockBytes},
           {"runtime_version", info.runtimeVersion}}};
}

llvm::json::Value HipDeviceInfo::toJSON() const {
  return toJSONWith(getChip(), getOwnFields(*this));
}

llvm::Expected<HipDeviceInfo>
HipDeviceInfo::fromJSON(const llvm::json::Value &value) {
  return fromJSONWith(value, getOwnFields<HipDeviceInfo>,
                      "malformed AMD GPU description");
}

HipDevice::~HipDevice() = default;

llvm::Error HipDevice::synchronize() {
  return api->gpu.check(api->hipDeviceSynchronize(), "hipDeviceSynchronize");
}

llvm::Expected<std::unique_ptr<HipDevice>> ke::openHipDevice(int ordinal) {
  llvm::Expected<const RuntimeApi *> loaded = loadRuntime();
  if (!loaded)
    return loaded.takeError();
  const RuntimeApi &api = **loaded;
  // Without a GPU (or without /dev/kfd access) the runtime fails here or
  // reports no devices, depending on its version.
  hipError_t result = api.hipInit(0);
  if (result != hipSuccess)
    return makeError("no AMD GPU (hipInit: " + describeError(api, result) +
                     ")");
  int count = 0;
  result = api.hipGetDeviceCount(&count);
  if (result == hipErrorNoDevice || (result == hipSuccess && count == 0))
    return makeError("no AMD GPU (the HIP runtime reports none)");
  if (llvm::Error error = api.gpu.check(result, "hipGetDeviceCount"))
    return std::move(error);
  if (llvm::Error error = checkDeviceOrdinal("AMD GPU", ordinal, count))
    return std::move(error);

  std::unique_ptr<HipDevice> device(new HipDevice(api, ordinal));
  if (llvm::Error error =
          api.gpu.check(api.hipSetDevice(ordinal), "hipSetDevice"))
    return std::move(error);
  HipDeviceInfo &info = device->info;
  llvm::Expected<std::string> arch = getGcnArchName(api, ordinal);
  if (!arch)
    return arch.takeError();
  info.gcnArchName = *arch;
  const GpuDeviceAttribute attributes[] = {
      {hipDeviceAttributeMultiprocessorCount, "compute units",
       info.multiprocessors},
      {hipDeviceAttributeMaxThreadsPerBlock, "threads per block",
       info.maxThreadsPerBlock},
      {hipDeviceAttributeWarpSize, "wavefront size", info.warpSize},
      {hipDeviceAttributeL2CacheSize, "L2 cache size", info.l2CacheBytes},
      {hipDeviceAttributeMaxSharedMemoryPerBlock, "LDS per workgroup",
       info.sharedMemoryPerBlockBytes}};
  // HIP names devices by their ordinal.
  const GpuDeviceFunctions functions = {api.hipDeviceGetName,
                                        api.hipDeviceGetAttribute,
                                        api.hipDeviceTotalMem,
                                        api.hipRuntimeGetVersion,
                                        "hipDeviceGetName",
                                        "hipDeviceGetAttribute",
                                        "hipDeviceTotalMem",
                                        "hipRuntimeGetVersion",
                                        hipDeviceAttributeMemoryClockRate,
                                        hipDeviceAttributeMemoryBusWidth};
  if (llvm::Error error = queryDeviceInfo(
          api.gpu, functions, ordinal, attributes, info, info.runtimeVersion))
    return std::move(error);
  return device;
}

llvm::Expected<HipDeviceInfo> ke::probeHipDevice(int ordinal,
                                                 double timeoutSeconds) {
  return probeInChild<HipDeviceInfo, HipDevice>(openHipDevice, "AMD GPU",
                                                ordinal, timeoutSeconds);
}

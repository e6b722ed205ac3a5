//===- HipDevice.cpp - Opening and probing AMD GPUs -----------------------===//

#include "ke/Runtime/HipRunner.h"

#include "HipDriver.h"

#include "GpuProbe.h"

#include "llvm/Support/FormatVariadic.h"

using namespace ke;
using namespace ke::hip;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string HipDeviceInfo::getChip() const {
  return llvm::StringRef(gcnArchName).split(':').first.str();
}

llvm::json::Value HipDeviceInfo::toJSON() const {
  return llvm::json::Object{
      {"ordinal", ordinal},
      {"name", name},
      {"chip", getChip()},
      {"gcn_arch_name", gcnArchName},
      {"multiprocessors", multiprocessors},
      {"max_threads_per_block", maxThreadsPerBlock},
      {"warp_size", warpSize},
      {"l2_cache_bytes", l2CacheBytes},
      {"total_memory_bytes", totalMemoryBytes},
      {"shared_memory_per_block_bytes", sharedMemoryPerBlockBytes},
      {"peak_bandwidth_bytes_per_second", peakBandwidthBytesPerSecond},
      {"runtime_version", runtimeVersion}};
}

llvm::Expected<HipDeviceInfo>
HipDeviceInfo::fromJSON(const llvm::json::Value &value) {
  const llvm::json::Object *o = value.getAsObject();
  if (!o || !o->getString("name") || !o->getString("gcn_arch_name"))
    return makeError("malformed AMD GPU description");
  HipDeviceInfo info;
  info.ordinal = int(o->getInteger("ordinal").value_or(0));
  info.name = o->getString("name")->str();
  info.gcnArchName = o->getString("gcn_arch_name")->str();
  info.multiprocessors = unsigned(o->getInteger("multiprocessors").value_or(0));
  info.maxThreadsPerBlock =
      unsigned(o->getInteger("max_threads_per_block").value_or(0));
  info.warpSize = unsigned(o->getInteger("warp_size").value_or(0));
  info.l2CacheBytes = uint64_t(o->getInteger("l2_cache_bytes").value_or(0));
  info.totalMemoryBytes =
      uint64_t(o->getInteger("total_memory_bytes").value_or(0));
  info.sharedMemoryPerBlockBytes =
      uint64_t(o->getInteger("shared_memory_per_block_bytes").value_or(0));
  info.peakBandwidthBytesPerSecond =
      o->getNumber("peak_bandwidth_bytes_per_second").value_or(0);
  info.runtimeVersion = int(o->getInteger("runtime_version").value_or(0));
  return info;
}

HipDevice::~HipDevice() = default;

llvm::Error HipDevice::synchronize() {
  return check(*api, api->hipDeviceSynchronize(), "hipDeviceSynchronize");
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
  if (llvm::Error error = check(api, result, "hipGetDeviceCount"))
    return std::move(error);
  if (ordinal < 0 || ordinal >= count)
    return makeError(llvm::formatv("no AMD GPU #{0} (this machine has {1})",
                                   ordinal, count));

  std::unique_ptr<HipDevice> device(new HipDevice());
  device->api = &api;
  HipDeviceInfo &info = device->info;
  info.ordinal = ordinal;
  if (llvm::Error error =
          check(api, api.hipSetDevice(ordinal), "hipSetDevice"))
    return std::move(error);
  char name[256] = {0};
  if (llvm::Error error =
          check(api, api.hipDeviceGetName(name, sizeof(name) - 1, ordinal),
                "hipDeviceGetName"))
    return std::move(error);
  info.name = name;
  llvm::Expected<std::string> arch = getGcnArchName(api, ordinal);
  if (!arch)
    return arch.takeError();
  info.gcnArchName = *arch;

  const std::pair<int, const char *> attributes[7] = {
      {hipDeviceAttributeMultiprocessorCount, "compute units"},
      {hipDeviceAttributeMaxThreadsPerBlock, "threads per block"},
      {hipDeviceAttributeWarpSize, "wavefront size"},
      {hipDeviceAttributeL2CacheSize, "L2 cache size"},
      {hipDeviceAttributeMaxSharedMemoryPerBlock, "LDS per workgroup"},
      {hipDeviceAttributeMemoryClockRate, "memory clock"},
      {hipDeviceAttributeMemoryBusWidth, "memory bus width"}};
  int values[7];
  for (int i = 0; i < 7; ++i) {
    values[i] = 0;
    if (llvm::Error error = check(
            api,
            api.hipDeviceGetAttribute(&values[i], attributes[i].first, ordinal),
            llvm::formatv("hipDeviceGetAttribute({0})", attributes[i].second)
                .str()))
      return std::move(error);
  }
  info.multiprocessors = unsigned(values[0]);
  info.maxThreadsPerBlock = unsigned(values[1]);
  info.warpSize = unsigned(values[2]);
  info.l2CacheBytes = uint64_t(unsigned(values[3]));
  info.sharedMemoryPerBlockBytes = uint64_t(unsigned(values[4]));
  // kHz, double data rate, bits: bytes per second.
  info.peakBandwidthBytesPerSecond =
      2.0 * double(values[5]) * 1e3 * double(values[6]) / 8.0;
  size_t totalMemory = 0;
  if (llvm::Error error = check(
          api, api.hipDeviceTotalMem(&totalMemory, ordinal),
          "hipDeviceTotalMem"))
    return std::move(error);
  info.totalMemoryBytes = totalMemory;
  if (llvm::Error error =
          check(api, api.hipRuntimeGetVersion(&info.runtimeVersion),
                "hipRuntimeGetVersion"))
    return std::move(error);
  return device;
}

llvm::Expected<HipDeviceInfo> ke::probeHipDevice(int ordinal,
                                                 double timeoutSeconds) {
  return probeInChild<HipDeviceInfo, HipDevice>(openHipDevice, "AMD GPU",
                                                ordinal, timeoutSeconds);
}

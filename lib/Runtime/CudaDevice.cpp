//===- CudaDevice.cpp - Opening and probing CUDA devices ------------------===//

#include "ke/Runtime/CudaRunner.h"

#include "CudaDriver.h"

#include "GpuProbe.h"

#include "ke/Runtime/L2Flush.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstring>

using namespace ke;
using namespace ke::cuda;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

std::string CudaDeviceInfo::getChip() const {
  return llvm::formatv("sm_{0}{1}", computeMajor, computeMinor).str();
}

llvm::json::Value CudaDeviceInfo::toJSON() const {
  return llvm::json::Object{
      {"ordinal", ordinal},
      {"name", name},
      {"chip", getChip()},
      {"compute_major", computeMajor},
      {"compute_minor", computeMinor},
      {"multiprocessors", multiprocessors},
      {"max_threads_per_block", maxThreadsPerBlock},
      {"l2_cache_bytes", l2CacheBytes},
      {"total_memory_bytes", totalMemoryBytes},
      {"shared_memory_per_block_optin_bytes", sharedMemoryPerBlockOptinBytes},
      {"peak_bandwidth_bytes_per_second", peakBandwidthBytesPerSecond},
      {"driver_version", driverVersion},
      {"l2_flush_kernel_error", l2FlushKernelError}};
}

llvm::Expected<CudaDeviceInfo>
CudaDeviceInfo::fromJSON(const llvm::json::Value &value) {
  const llvm::json::Object *o = value.getAsObject();
  if (!o || !o->getString("name") || !o->getInteger("compute_major"))
    return makeError("malformed CUDA device description");
  CudaDeviceInfo info;
  info.ordinal = int(o->getInteger("ordinal").value_or(0));
  info.name = o->getString("name")->str();
  info.computeMajor = int(*o->getInteger("compute_major"));
  info.computeMinor = int(o->getInteger("compute_minor").value_or(0));
  info.multiprocessors = unsigned(o->getInteger("multiprocessors").value_or(0));
  info.maxThreadsPerBlock =
      unsigned(o->getInteger("max_threads_per_block").value_or(0));
  info.l2CacheBytes = uint64_t(o->getInteger("l2_cache_bytes").value_or(0));
  info.totalMemoryBytes =
      uint64_t(o->getInteger("total_memory_bytes").value_or(0));
  info.sharedMemoryPerBlockOptinBytes = uint64_t(
      o->getInteger("shared_memory_per_block_optin_bytes").value_or(0));
  info.peakBandwidthBytesPerSecond =
      o->getNumber("peak_bandwidth_bytes_per_second").value_or(0);
  info.driverVersion = int(o->getInteger("driver_version").value_or(0));
  if (std::optional<llvm::StringRef> error =
          o->getString("l2_flush_kernel_error"))
    info.l2FlushKernelError = error->str();
  return info;
}

CudaDevice::~CudaDevice() {
  if (context)
    api->cuDevicePrimaryCtxRelease(device);
}

llvm::Error CudaDevice::synchronize() {
  return check(*api, api->cuCtxSynchronize(), "cuCtxSynchronize");
}

void CudaDevice::checkL2FlushKernel() {
  void *module = nullptr, *function = nullptr;
  CUresult result = api->gpu.loadPtxFunction(
      &module, &function, getL2FlushKernelPtx(), kL2FlushKernelName);
  if (result != CUDA_SUCCESS) {
    info.l2FlushKernelError = describeResult(*api, result);
    return;
  }
  api->cuModuleUnload(static_cast<CUmodule>(module));
}

llvm::Expected<std::unique_ptr<CudaDevice>> ke::openCudaDevice(int ordinal) {
  llvm::Expected<const DriverApi *> loaded = loadDriver();
  if (!loaded)
    return loaded.takeError();
  const DriverApi &api = **loaded;
  CUresult result = api.cuInit(0);
  if (result == CUDA_ERROR_NO_DEVICE)
    return makeError("no CUDA device (cuInit: " + describeResult(api, result) +
                     ")");
  if (result != CUDA_SUCCESS)
    return makeError("no CUDA device: the driver (" + getDriverLibraryName() +
                     ") does not initialize: " + describeResult(api, result));
  int count = 0;
  if (llvm::Error error =
          check(api, api.cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return std::move(error);
  if (count == 0)
    return makeError("no CUDA device (the driver reports none)");
  if (ordinal < 0 || ordinal >= count)
    return makeError(llvm::formatv("no CUDA device #{0} (this machine has {1})",
                                   ordinal, count));

  std::unique_ptr<CudaDevice> device(new CudaDevice());
  device->api = &api;
  CudaDeviceInfo &info = device->info;
  info.ordinal = ordinal;
  if (llvm::Error error = check(api, api.cuDeviceGet(&device->device, ordinal),
                                "cuDeviceGet"))
    return std::move(error);
  char name[256] = {0};
  if (llvm::Error error =
          check(api, api.cuDeviceGetName(name, sizeof(name) - 1, device->device),
                "cuDeviceGetName"))
    return std::move(error);
  info.name = name;
  auto attribute = [&](int which, const char *what) -> llvm::Expected<int> {
    int value = 0;
    if (llvm::Error error =
            check(api, api.cuDeviceGetAttribute(&value, which, device->device),
                  llvm::formatv("cuDeviceGetAttribute({0})", what).str()))
      return std::move(error);
    return value;
  };
  int values[8];
  const std::pair<int, const char *> attributes[8] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability"},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability"},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessors"},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block"},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 cache size"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       "shared memory per block"},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "memory clock"},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "memory bus width"}};
  for (int i = 0; i < 8; ++i) {
    llvm::Expected<int> value =
        attribute(attributes[i].first, attributes[i].second);
    if (!value)
      return value.takeError();
    values[i] = *value;
  }
  info.computeMajor = values[0];
  info.computeMinor = values[1];
  info.multiprocessors = unsigned(values[2]);
  info.maxThreadsPerBlock = unsigned(values[3]);
  info.l2CacheBytes = uint64_t(values[4]);
  info.sharedMemoryPerBlockOptinBytes = uint64_t(values[5]);
  // kHz, double data rate, bits: bytes per second.
  info.peakBandwidthBytesPerSecond =
      2.0 * double(values[6]) * 1e3 * double(values[7]) / 8.0;
  size_t totalMemory = 0;
  if (llvm::Error error =
          check(api, api.cuDeviceTotalMem(&totalMemory, device->device),
                "cuDeviceTotalMem"))
    return std::move(error);
  info.totalMemoryBytes = totalMemory;
  if (llvm::Error error = check(api, api.cuDriverGetVersion(&info.driverVersion),
                                "cuDriverGetVersion"))
    return std::move(error);

  CUcontext context = nullptr;
  if (llvm::Error error =
          check(api, api.cuDevicePrimaryCtxRetain(&context, device->device),
                "cuDevicePrimaryCtxRetain"))
    return std::move(error);
  device->context = context;
  if (llvm::Error error =
          check(api, api.cuCtxSetCurrent(context), "cuCtxSetCurrent"))
    return std::move(error);
  return device;
}

/// openCudaDevice, then whether the L2 flush kernel loads there.
static llvm::Expected<std::unique_ptr<CudaDevice>>
openAndCheckL2Flush(int ordinal) {
  llvm::Expected<std::unique_ptr<CudaDevice>> device = openCudaDevice(ordinal);
  if (device)
    (*device)->checkL2FlushKernel();
  return device;
}

llvm::Expected<CudaDeviceInfo> ke::probeCudaDevice(int ordinal,
                                                   double timeoutSeconds) {
  llvm::Expected<CudaDeviceInfo> info =
      probeInChild<CudaDeviceInfo, CudaDevice>(
          openAndCheckL2Flush, "CUDA device", ordinal, timeoutSeconds);
  // Said here, in the parent: each candidate's child would say it to
  // /dev/null (ChildProcess.cpp).
  static std::atomic<bool> warned{false};
  if (info && !info->l2FlushKernelError.empty() && !warned.exchange(true))
    llvm::errs() << "ke: warning: the L2 flush kernel does not load on "
                 << info->name << " (" << info->l2FlushKernelError
                 << "); the runner flushes the L2 with cuMemsetD8 instead, "
                    "which leaves dirty lines that each timed run pays to "
                    "write back (docs/measurement.md)\n";
  return info;
}

//===- CudaDevice.cpp - Opening and probing CUDA devices ------------------===//

#include "ke/Runtime/CudaRunner.h"

#include "CudaDriver.h"
#include "GpuDeviceQueries.h"
#include "GpuProbe.h"

#include "ke/Runtime/L2Flush.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
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

/// CudaDeviceInfo's own JSON keys (GpuDeviceInfo has the common ones), for
/// writing (`Info` const) and reading.
template <typename Info>
static std::array<GpuInfoField, 8> getOwnFields(Info &info) {
  return {{{"compute_major", info.computeMajor, /*required=*/true},
           {"compute_minor", info.computeMinor},
           {"pci_domain", info.pciDomain},
           {"pci_bus", info.pciBus},
           {"pci_device", info.pciDevice},
           {"shared_memory_per_block_optin_bytes",
            info.sharedMemoryPerBlockOptinBytes},
           {"driver_version", info.driverVersion},
           {"l2_flush_kernel_error", info.l2FlushKernelError}}};
}

std::string CudaDeviceInfo::getPciBusId() const {
  return llvm::formatv("{0:x-4}:{1:x-2}:{2:x-2}.0", pciDomain, pciBus,
                       pciDevice)
      .str();
}

llvm::json::Value CudaDeviceInfo::toJSON() const {
  return toJSONWith(getChip(), getOwnFields(*this));
}

llvm::Expected<CudaDeviceInfo>
CudaDeviceInfo::fromJSON(const llvm::json::Value &value) {
  return fromJSONWith(value, getOwnFields<CudaDeviceInfo>,
                      "malformed CUDA device description");
}

CudaDevice::~CudaDevice() {
  if (context)
    api->cuDevicePrimaryCtxRelease(device);
}

llvm::Error CudaDevice::synchronize() {
  return api->gpu.check(api->cuCtxSynchronize(), "cuCtxSynchronize");
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
          api.gpu.check(api.cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return std::move(error);
  if (count == 0)
    return makeError("no CUDA device (the driver reports none)");
  if (llvm::Error error = checkDeviceOrdinal("CUDA device", ordinal, count))
    return std::move(error);

  std::unique_ptr<CudaDevice> device(new CudaDevice(api, ordinal));
  if (llvm::Error error = api.gpu.check(
          api.cuDeviceGet(&device->device, ordinal), "cuDeviceGet"))
    return std::move(error);
  CudaDeviceInfo &info = device->info;
  const GpuDeviceAttribute attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability",
       info.computeMajor},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability",
       info.computeMinor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessors",
       info.multiprocessors},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block",
       info.maxThreadsPerBlock},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 cache size", info.l2CacheBytes},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       "shared memory per block", info.sharedMemoryPerBlockOptinBytes},
      {CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, "PCI domain", info.pciDomain},
      {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, "PCI bus", info.pciBus},
      {CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, "PCI device", info.pciDevice}};
  const GpuDeviceFunctions functions = {
      api.cuDeviceGetName,
      api.cuDeviceGetAttribute,
      api.cuDeviceTotalMem,
      api.cuDriverGetVersion,
      "cuDeviceGetName",
      "cuDeviceGetAttribute",
      "cuDeviceTotalMem",
      "cuDriverGetVersion",
      CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
      CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH};
  if (llvm::Error error = queryDeviceInfo(api.gpu, functions, device->device,
                                          attributes, info, info.driverVersion))
    return std::move(error);

  CUcontext context = nullptr;
  if (llvm::Error error =
          api.gpu.check(api.cuDevicePrimaryCtxRetain(&context, device->device),
                        "cuDevicePrimaryCtxRetain"))
    return std::move(error);
  device->context = context;
  if (llvm::Error error =
          api.gpu.check(api.cuCtxSetCurrent(context), "cuCtxSetCurrent"))
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

//===- HipRunner.cpp - Loading device code on an AMD GPU ------------------===//

#include "ke/Runtime/HipRunner.h"

#include "HipDriver.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace ke;
using namespace ke::hip;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Device code
//===----------------------------------------------------------------------===//

/// The last-level cache a run can leave data in. MI300 (gfx94x) and MI350
/// (gfx950) put a 256 MiB Infinity Cache behind their L2s, which
/// hipDeviceAttributeL2CacheSize does not count.
static uint64_t getLastLevelCacheBytes(const HipDeviceInfo &info) {
  uint64_t bytes = info.l2CacheBytes;
  llvm::StringRef chip = info.gcnArchName;
  if (chip.starts_with("gfx94") || chip.starts_with("gfx95"))
    bytes = std::max<uint64_t>(bytes, 256ull << 20);
  return bytes ? bytes : 32ull << 20;
}

llvm::Expected<std::unique_ptr<HipModule>>
HipModule::load(HipDevice &device, const GpuKernelBinary &binary) {
  const RuntimeApi &api = device.getApi();
  if (binary.format != "hsaco")
    return makeError("an AMD GPU runs HSA code objects (hsaco), not '" +
                     binary.format + "'");
  if (binary.image.empty())
    return makeError("the GPU binary is empty");

  std::unique_ptr<HipModule> loaded(new HipModule());
  loaded->api = &api.gpu;
  hipModule_t module = nullptr;
  // hipErrorNoBinaryForGpu here: a code object for another processor.
  if (llvm::Error error =
          check(api, api.hipModuleLoadData(&module, binary.image.data()),
                "hipModuleLoadData (code object for " +
                    device.getInfo().getChip() + ")"))
    return std::move(error);
  loaded->module = module;
  loaded->launches = binary.launches;
  loaded->scratch = binary.scratch;
  const HipDeviceInfo &info = device.getInfo();
  // Twice the cache, so that nothing the previous run left there survives.
  loaded->flushBytes = 2 * getLastLevelCacheBytes(info);
  for (const GpuLaunch &launch : binary.launches) {
    hipFunction_t function = nullptr;
    if (llvm::Error error =
            check(api,
                  api.hipModuleGetFunction(&function, module,
                                           launch.kernelName.c_str()),
                  "hipModuleGetFunction('" + launch.kernelName + "')"))
      return std::move(error);
    if (llvm::Error error = checkLaunchShape(launch, info.maxThreadsPerBlock))
      return std::move(error);
    // AMD GPUs have no opt-in carve-out: LDS is all there is.
    if (info.sharedMemoryPerBlockBytes &&
        launch.dynamicSharedMemoryBytes > info.sharedMemoryPerBlockBytes)
      return makeError(llvm::formatv(
          "launch of {0}: {1} bytes of dynamic LDS, the device allows {2} "
          "per workgroup",
          launch.kernelName, launch.dynamicSharedMemoryBytes,
          info.sharedMemoryPerBlockBytes));
    loaded->functions.push_back(function);
  }
  return loaded;
}

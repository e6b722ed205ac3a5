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

/// The last-level cache a run can leave data in (0: not known). MI300
/// (gfx94x) and MI350 (gfx950) put a 256 MiB Infinity Cache behind their
/// L2s, which hipDeviceAttributeL2CacheSize does not count.
static uint64_t getLastLevelCacheBytes(const HipDeviceInfo &info) {
  uint64_t bytes = info.l2CacheBytes;
  llvm::StringRef chip = info.gcnArchName;
  if (chip.starts_with("gfx94") || chip.starts_with("gfx95"))
    bytes = std::max<uint64_t>(bytes, 256ull << 20);
  return bytes;
}

llvm::Expected<std::unique_ptr<HipModule>>
HipModule::load(HipDevice &device, const GpuKernelBinary &binary) {
  const RuntimeApi &api = device.getApi();
  if (binary.format != "hsaco")
    return makeError("an AMD GPU runs HSA code objects (hsaco), not '" +
                     binary.format + "'");
  if (llvm::Error error = checkImage(binary.image))
    return std::move(error);

  std::unique_ptr<HipModule> loaded(new HipModule());
  loaded->api = &api.gpu;
  hipModule_t module = nullptr;
  // hipErrorNoBinaryForGpu here: a code object for another processor.
  if (llvm::Error error =
          api.gpu.check(api.hipModuleLoadData(&module, binary.image.data()),
                        "hipModuleLoadData (code object for " +
                            device.getInfo().getChip() + ")"))
    return std::move(error);
  loaded->module = module;
  const HipDeviceInfo &info = device.getInfo();
  // AMD GPUs have no opt-in carve-out: LDS is all there is, and every
  // launch's is checked against it.
  if (llvm::Error error = loaded->loadLaunches(
          binary, info, getLastLevelCacheBytes(info),
          {0, info.sharedMemoryPerBlockBytes, "LDS", "workgroup"}))
    return std::move(error);
  return loaded;
}

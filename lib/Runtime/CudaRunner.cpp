//===- CudaRunner.cpp - Loading device code on an NVIDIA GPU --------------===//

#include "ke/Runtime/CudaRunner.h"

#include "CudaDriver.h"

#include "llvm/Support/FormatVariadic.h"

using namespace ke;
using namespace ke::cuda;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Device code
//===----------------------------------------------------------------------===//

/// Dynamic shared memory a block gets without opting in.
static constexpr uint32_t kDefaultDynamicSharedMemory = 48 * 1024;

llvm::Expected<std::unique_ptr<CudaModule>>
CudaModule::load(CudaDevice &device, const GpuKernelBinary &binary) {
  const DriverApi &api = device.getApi();
  if (binary.format != "ptx" && binary.format != "cubin")
    return makeError("a CUDA device runs PTX or cubin images, not '" +
                     binary.format + "'");
  const std::string &image = binary.format == "ptx" && binary.image.empty()
                                 ? binary.assembly
                                 : binary.image;
  if (llvm::Error error = checkImage(image))
    return std::move(error);

  std::unique_ptr<CudaModule> loaded(new CudaModule());
  loaded->api = &api.gpu;
  // The PTX JIT's error log says which line it rejects.
  std::vector<char> errorLog(16384, 0);
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {errorLog.data(), reinterpret_cast<void *>(
                                         uintptr_t(errorLog.size() - 1))};
  CUmodule module = nullptr;
  // PTX must be NUL-terminated; std::string's c_str() is.
  CUresult result =
      api.cuModuleLoadDataEx(&module, image.c_str(), 2, options, values);
  if (result != CUDA_SUCCESS) {
    std::string message = "cuModuleLoadDataEx (" + binary.format +
                          "): " + describeResult(api, result);
    if (errorLog[0])
      message += ": " + llvm::StringRef(errorLog.data()).trim().str();
    return makeError(message);
  }
  loaded->module = module;
  const CudaDeviceInfo &info = device.getInfo();
  if (llvm::Error error = loaded->loadLaunches(
          binary, info, info.l2CacheBytes,
          {kDefaultDynamicSharedMemory, info.sharedMemoryPerBlockOptinBytes,
           "shared memory", "block"}))
    return std::move(error);
  return loaded;
}

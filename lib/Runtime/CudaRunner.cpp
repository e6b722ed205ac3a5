//===- CudaRunner.cpp - Running lowered kernels on an NVIDIA GPU ----------===//

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

CudaModule::~CudaModule() {
  if (module)
    device->getApi().cuModuleUnload(static_cast<CUmodule>(module));
}

llvm::Expected<std::unique_ptr<CudaModule>>
CudaModule::load(CudaDevice &device, const GpuKernelBinary &binary) {
  const DriverApi &api = device.getApi();
  if (binary.format != "ptx" && binary.format != "cubin")
    return makeError("a CUDA device runs PTX or cubin images, not '" +
                     binary.format + "'");
  const std::string &image = binary.format == "ptx" && binary.image.empty()
                                 ? binary.assembly
                                 : binary.image;
  if (image.empty())
    return makeError("the GPU binary is empty");

  std::unique_ptr<CudaModule> loaded(new CudaModule());
  loaded->device = &device;
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
  loaded->launches = binary.launches;
  loaded->scratch = binary.scratch;
  const CudaDeviceInfo &info = device.getInfo();
  for (const GpuLaunch &launch : binary.launches) {
    CUfunction function = nullptr;
    if (llvm::Error error =
            check(api,
                  api.cuModuleGetFunction(&function, module,
                                          launch.kernelName.c_str()),
                  "cuModuleGetFunction('" + launch.kernelName + "')"))
      return std::move(error);
    uint64_t threads = uint64_t(launch.block[0]) * launch.block[1] *
                       launch.block[2];
    if (threads == 0 || launch.grid[0] * uint64_t(launch.grid[1]) *
                                launch.grid[2] ==
                            0)
      return makeError("launch of " + launch.kernelName +
                       " has an empty grid or block");
    if (info.maxThreadsPerBlock && threads > info.maxThreadsPerBlock)
      return makeError(llvm::formatv(
          "launch of {0}: {1} threads per block, the device allows {2}",
          launch.kernelName, threads, info.maxThreadsPerBlock));
    if (launch.dynamicSharedMemoryBytes > kDefaultDynamicSharedMemory) {
      if (info.sharedMemoryPerBlockOptinBytes &&
          launch.dynamicSharedMemoryBytes > info.sharedMemoryPerBlockOptinBytes)
        return makeError(llvm::formatv(
            "launch of {0}: {1} bytes of dynamic shared memory, the device "
            "allows {2} per block",
            launch.kernelName, launch.dynamicSharedMemoryBytes,
            info.sharedMemoryPerBlockOptinBytes));
      if (llvm::Error error = check(
              api,
              api.cuFuncSetAttribute(
                  function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                  int(launch.dynamicSharedMemoryBytes)),
              "cuFuncSetAttribute(max dynamic shared memory, " +
                  launch.kernelName + ")"))
        return std::move(error);
    }
    loaded->functions.push_back(function);
  }
  return loaded;
}

//===----------------------------------------------------------------------===//
// Running and timing
//===----------------------------------------------------------------------===//

struct CudaRunner::Buffers {
  const DriverApi *api = nullptr;
  std::vector<BufferRole> roles;
  std::vector<ElementKind> kinds;
  std::vector<size_t> bytes;
  /// What the launches use for outputs, scratch and accumulators.
  std::vector<CUdeviceptr> working;
  /// Pristine inputs and accumulators per set (0 for other arguments).
  std::vector<std::vector<CUdeviceptr>> sets;
  /// The module's scratch buffers (GpuKernelBinary::scratch), shared by
  /// all sets: every run writes them before it reads them.
  std::vector<CUdeviceptr> scratch;
  CUdeviceptr flush = 0;
  size_t flushBytes = 0;
  CUevent start = nullptr, stop = nullptr;
  /// Per set, per launch: inputs are read straight from the set's copies.
  std::vector<std::vector<LaunchParameters>> parameters;

  ~Buffers() {
    for (CUdeviceptr p : working)
      if (p)
        api->cuMemFree(p);
    for (CUdeviceptr p : scratch)
      if (p)
        api->cuMemFree(p);
    for (const std::vector<CUdeviceptr> &set : sets)
      for (CUdeviceptr p : set)
        if (p)
          api->cuMemFree(p);
    if (flush)
      api->cuMemFree(flush);
    if (start)
      api->cuEventDestroy(start);
    if (stop)
      api->cuEventDestroy(stop);
  }

  llvm::Expected<CUdeviceptr> allocate(size_t size, llvm::StringRef what) {
    CUdeviceptr pointer = 0;
    // cuMemAlloc refuses 0 bytes; a 0-d or empty buffer still has an address.
    if (llvm::Error error =
            check(*api, api->cuMemAlloc(&pointer, std::max<size_t>(size, 256)),
                  llvm::formatv("cuMemAlloc({0} bytes for {1})", size, what)
                      .str()))
      return std::move(error);
    return pointer;
  }
};

CudaRunner::~CudaRunner() = default;

/// NaN in every float type; for integers the CPU runner's 0x5A pattern.
static unsigned char getPoisonByte(ElementKind kind) {
  switch (kind) {
  case ElementKind::F64:
  case ElementKind::F32:
  case ElementKind::F16:
  case ElementKind::BF16:
    return 0xFF;
  default:
    return 0x5A;
  }
}

llvm::Expected<std::unique_ptr<CudaRunner>>
CudaRunner::create(CudaModule &module, llvm::ArrayRef<KernelArgument> arguments,
                   llvm::ArrayRef<std::vector<HostBuffer>> inputSets) {
  if (inputSets.empty())
    return makeError("no input sets");
  for (const std::vector<HostBuffer> &set : inputSets)
    if (set.size() != arguments.size())
      return makeError("an input set does not match the kernel's arguments");
  std::unique_ptr<CudaRunner> runner(new CudaRunner());
  runner->module = &module;
  runner->buffers = std::make_unique<Buffers>();
  Buffers &b = *runner->buffers;
  b.api = &module.device->getApi();
  const DriverApi &api = *b.api;

  for (auto [index, argument] : llvm::enumerate(arguments)) {
    b.roles.push_back(argument.role);
    b.kinds.push_back(inputSets[0][index].getKind());
    b.bytes.push_back(inputSets[0][index].getSizeInBytes());
    CUdeviceptr working = 0;
    if (argument.role != BufferRole::Input) {
      llvm::Expected<CUdeviceptr> allocated =
          b.allocate(b.bytes.back(), "argument #" + std::to_string(index));
      if (!allocated)
        return allocated.takeError();
      working = *allocated;
    }
    b.working.push_back(working);
  }
  for (const std::vector<HostBuffer> &set : inputSets) {
    b.sets.emplace_back(arguments.size(), 0);
    for (auto [index, argument] : llvm::enumerate(arguments)) {
      if (argument.role != BufferRole::Input &&
          argument.role != BufferRole::Accumulator)
        continue;
      llvm::Expected<CUdeviceptr> allocated =
          b.allocate(b.bytes[index], "input #" + std::to_string(index));
      if (!allocated)
        return allocated.takeError();
      b.sets.back()[index] = *allocated;
      if (llvm::Error error =
              check(api,
                    api.cuMemcpyHtoD(*allocated, set[index].getData(),
                                     b.bytes[index]),
                    "cuMemcpyHtoD"))
        return std::move(error);
    }
  }

  for (auto [index, buffer] : llvm::enumerate(module.scratch)) {
    llvm::Expected<CUdeviceptr> allocated =
        b.allocate(buffer.bytes, "scratch #" + std::to_string(index));
    if (!allocated)
      return allocated.takeError();
    b.scratch.push_back(*allocated);
  }
  std::vector<DeviceBufferRef> scratchRefs;
  for (auto [index, buffer] : llvm::enumerate(module.scratch))
    scratchRefs.push_back(
        {uint64_t(b.scratch[index]), buffer.shape});

  // Twice the L2, so that nothing the previous run left there survives.
  uint64_t l2 = module.device->getInfo().l2CacheBytes;
  b.flushBytes = l2 ? 2 * l2 : 64ull << 20;
  llvm::Expected<CUdeviceptr> flush = b.allocate(b.flushBytes, "L2 flush");
  if (!flush)
    return flush.takeError();
  b.flush = *flush;
  if (llvm::Error error =
          check(api, api.cuEventCreate(&b.start, 0), "cuEventCreate"))
    return std::move(error);
  if (llvm::Error error =
          check(api, api.cuEventCreate(&b.stop, 0), "cuEventCreate"))
    return std::move(error);

  for (const std::vector<CUdeviceptr> &set : b.sets) {
    std::vector<DeviceBufferRef> refs;
    for (auto [index, argument] : llvm::enumerate(arguments))
      refs.push_back({argument.role == BufferRole::Input ? set[index]
                                                         : b.working[index],
                      argument.shape});
    b.parameters.emplace_back();
    for (const GpuLaunch &launch : module.launches) {
      llvm::Expected<LaunchParameters> packed =
          packLaunchArguments(launch, refs, scratchRefs);
      if (!packed)
        return packed.takeError();
      b.parameters.back().push_back(std::move(*packed));
    }
  }
  return runner;
}

llvm::Error CudaRunner::prepare(unsigned set) {
  Buffers &b = *buffers;
  currentSet = set % b.sets.size();
  for (size_t i = 0; i < b.roles.size(); ++i) {
    if (b.roles[i] == BufferRole::Input)
      continue;
    if (b.roles[i] == BufferRole::Accumulator) {
      if (llvm::Error error = check(
              *b.api,
              b.api->cuMemcpyDtoD(b.working[i], b.sets[currentSet][i],
                                  b.bytes[i]),
              "cuMemcpyDtoD (restoring an accumulator)"))
        return error;
      continue;
    }
    if (llvm::Error error =
            check(*b.api,
                  b.api->cuMemsetD8(b.working[i], getPoisonByte(b.kinds[i]),
                                    b.bytes[i]),
                  "cuMemsetD8 (poisoning an output)"))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error CudaRunner::flushL2() {
  Buffers &b = *buffers;
  return check(*b.api, b.api->cuMemsetD8(b.flush, 0, b.flushBytes),
               "cuMemsetD8 (L2 flush)");
}

llvm::Expected<double> CudaRunner::runTimed() {
  Buffers &b = *buffers;
  const DriverApi &api = *b.api;
  if (llvm::Error error =
          check(api, api.cuEventRecord(b.start, nullptr), "cuEventRecord"))
    return std::move(error);
  for (auto [index, launch] : llvm::enumerate(module->launches)) {
    LaunchParameters &params = b.parameters[currentSet][index];
    CUresult result = api.cuLaunchKernel(
        static_cast<CUfunction>(module->functions[index]), launch.grid[0],
        launch.grid[1], launch.grid[2], launch.block[0], launch.block[1],
        launch.block[2], launch.dynamicSharedMemoryBytes, nullptr,
        params.data(), nullptr);
    if (llvm::Error error =
            check(api, result,
                  llvm::formatv("cuLaunchKernel({0}, grid {1}x{2}x{3}, block "
                                "{4}x{5}x{6})",
                                launch.kernelName, launch.grid[0],
                                launch.grid[1], launch.grid[2], launch.block[0],
                                launch.block[1], launch.block[2])
                      .str()))
      return std::move(error);
  }
  if (llvm::Error error =
          check(api, api.cuEventRecord(b.stop, nullptr), "cuEventRecord"))
    return std::move(error);
  // A fault inside a kernel (illegal address, trap) surfaces here.
  if (llvm::Error error = check(api, api.cuEventSynchronize(b.stop),
                                "running the kernels"))
    return std::move(error);
  float milliseconds = 0;
  if (llvm::Error error =
          check(api, api.cuEventElapsedTime(&milliseconds, b.start, b.stop),
                "cuEventElapsedTime"))
    return std::move(error);
  return double(milliseconds) * 1e-3;
}

llvm::Error CudaRunner::download(llvm::MutableArrayRef<HostBuffer> hosts) {
  Buffers &b = *buffers;
  if (hosts.size() != b.roles.size())
    return makeError("download: the host buffers do not match the kernel's "
                     "arguments");
  for (size_t i = 0; i < b.roles.size(); ++i) {
    if (b.roles[i] != BufferRole::Accumulator &&
        b.roles[i] != BufferRole::Output)
      continue;
    if (llvm::Error error = check(
            *b.api,
            b.api->cuMemcpyDtoH(hosts[i].getData(), b.working[i],
                                std::min(b.bytes[i], hosts[i].getSizeInBytes())),
            "cuMemcpyDtoH"))
      return error;
  }
  return llvm::Error::success();
}

llvm::Expected<Measurement> CudaRunner::measure(const MeasureOptions &options,
                                                unsigned firstSet) {
  // Device events time the launches (runTimed), not a host clock.
  unsigned run = 0;
  return measureRuns(
      [&]() -> llvm::Expected<double> {
        if (llvm::Error error = prepare(firstSet + run++))
          return std::move(error);
        if (llvm::Error error = flushL2())
          return std::move(error);
        return runTimed();
      },
      options);
}

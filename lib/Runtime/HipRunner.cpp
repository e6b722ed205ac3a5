//===- HipRunner.cpp - Running lowered kernels on an AMD GPU --------------===//

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

HipModule::~HipModule() {
  if (module)
    device->getApi().hipModuleUnload(static_cast<hipModule_t>(module));
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
  loaded->device = &device;
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
  for (const GpuLaunch &launch : binary.launches) {
    hipFunction_t function = nullptr;
    if (llvm::Error error =
            check(api,
                  api.hipModuleGetFunction(&function, module,
                                           launch.kernelName.c_str()),
                  "hipModuleGetFunction('" + launch.kernelName + "')"))
      return std::move(error);
    uint64_t threads =
        uint64_t(launch.block[0]) * launch.block[1] * launch.block[2];
    if (threads == 0 ||
        uint64_t(launch.grid[0]) * launch.grid[1] * launch.grid[2] == 0)
      return makeError("launch of " + launch.kernelName +
                       " has an empty grid or block");
    if (info.maxThreadsPerBlock && threads > info.maxThreadsPerBlock)
      return makeError(llvm::formatv(
          "launch of {0}: {1} threads per block, the device allows {2}",
          launch.kernelName, threads, info.maxThreadsPerBlock));
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

//===----------------------------------------------------------------------===//
// Running and timing
//===----------------------------------------------------------------------===//

struct HipRunner::Buffers {
  const RuntimeApi *api = nullptr;
  std::vector<BufferRole> roles;
  std::vector<ElementKind> kinds;
  std::vector<size_t> bytes;
  /// What the launches use for outputs, scratch and accumulators.
  std::vector<void *> working;
  /// Pristine inputs and accumulators per set (null for other arguments).
  std::vector<std::vector<void *>> sets;
  /// The module's scratch buffers (GpuKernelBinary::scratch), shared by
  /// all sets: every run writes them before it reads them.
  std::vector<void *> scratch;
  void *flush = nullptr;
  size_t flushBytes = 0;
  hipEvent_t start = nullptr, stop = nullptr;
  /// Per set, per launch: inputs are read straight from the set's copies.
  std::vector<std::vector<LaunchParameters>> parameters;

  ~Buffers() {
    for (void *p : working)
      if (p)
        api->hipFree(p);
    for (void *p : scratch)
      if (p)
        api->hipFree(p);
    for (const std::vector<void *> &set : sets)
      for (void *p : set)
        if (p)
          api->hipFree(p);
    if (flush)
      api->hipFree(flush);
    if (start)
      api->hipEventDestroy(start);
    if (stop)
      api->hipEventDestroy(stop);
  }

  llvm::Expected<void *> allocate(size_t size, llvm::StringRef what) {
    void *pointer = nullptr;
    // A 0-d or empty buffer still gets an address of its own.
    if (llvm::Error error =
            check(*api, api->hipMalloc(&pointer, std::max<size_t>(size, 256)),
                  llvm::formatv("hipMalloc({0} bytes for {1})", size, what)
                      .str()))
      return std::move(error);
    return pointer;
  }
};

HipRunner::~HipRunner() = default;

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

llvm::Expected<std::unique_ptr<HipRunner>>
HipRunner::create(HipModule &module, llvm::ArrayRef<KernelArgument> arguments,
                  llvm::ArrayRef<std::vector<HostBuffer>> inputSets) {
  if (inputSets.empty())
    return makeError("no input sets");
  for (const std::vector<HostBuffer> &set : inputSets)
    if (set.size() != arguments.size())
      return makeError("an input set does not match the kernel's arguments");
  std::unique_ptr<HipRunner> runner(new HipRunner());
  runner->module = &module;
  runner->buffers = std::make_unique<Buffers>();
  Buffers &b = *runner->buffers;
  b.api = &module.device->getApi();
  const RuntimeApi &api = *b.api;

  for (auto [index, argument] : llvm::enumerate(arguments)) {
    b.roles.push_back(argument.role);
    b.kinds.push_back(inputSets[0][index].getKind());
    b.bytes.push_back(inputSets[0][index].getSizeInBytes());
    void *working = nullptr;
    if (argument.role != BufferRole::Input) {
      llvm::Expected<void *> allocated =
          b.allocate(b.bytes.back(), "argument #" + std::to_string(index));
      if (!allocated)
        return allocated.takeError();
      working = *allocated;
    }
    b.working.push_back(working);
  }
  for (const std::vector<HostBuffer> &set : inputSets) {
    b.sets.emplace_back(arguments.size(), nullptr);
    for (auto [index, argument] : llvm::enumerate(arguments)) {
      if (argument.role != BufferRole::Input &&
          argument.role != BufferRole::Accumulator)
        continue;
      llvm::Expected<void *> allocated =
          b.allocate(b.bytes[index], "input #" + std::to_string(index));
      if (!allocated)
        return allocated.takeError();
      b.sets.back()[index] = *allocated;
      if (llvm::Error error =
              check(api,
                    api.hipMemcpy(*allocated, set[index].getData(),
                                  b.bytes[index], hipMemcpyHostToDevice),
                    "hipMemcpy (host to device)"))
        return std::move(error);
    }
  }

  for (auto [index, buffer] : llvm::enumerate(module.scratch)) {
    llvm::Expected<void *> allocated =
        b.allocate(buffer.bytes, "scratch #" + std::to_string(index));
    if (!allocated)
      return allocated.takeError();
    b.scratch.push_back(*allocated);
  }
  std::vector<DeviceBufferRef> scratchRefs;
  for (auto [index, buffer] : llvm::enumerate(module.scratch))
    scratchRefs.push_back(
        {uint64_t(reinterpret_cast<uintptr_t>(b.scratch[index])), buffer.shape});

  // Twice the cache, so that nothing the previous run left there survives.
  b.flushBytes = 2 * getLastLevelCacheBytes(module.device->getInfo());
  llvm::Expected<void *> flush = b.allocate(b.flushBytes, "cache flush");
  if (!flush)
    return flush.takeError();
  b.flush = *flush;
  if (llvm::Error error =
          check(api, api.hipEventCreate(&b.start), "hipEventCreate"))
    return std::move(error);
  if (llvm::Error error =
          check(api, api.hipEventCreate(&b.stop), "hipEventCreate"))
    return std::move(error);

  for (const std::vector<void *> &set : b.sets) {
    std::vector<DeviceBufferRef> refs;
    for (auto [index, argument] : llvm::enumerate(arguments)) {
      void *address =
          argument.role == BufferRole::Input ? set[index] : b.working[index];
      refs.push_back({uint64_t(reinterpret_cast<uintptr_t>(address)),
                      argument.shape});
    }
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

llvm::Error HipRunner::prepare(unsigned set) {
  Buffers &b = *buffers;
  currentSet = set % b.sets.size();
  for (size_t i = 0; i < b.roles.size(); ++i) {
    if (b.roles[i] == BufferRole::Input)
      continue;
    if (b.roles[i] == BufferRole::Accumulator) {
      if (llvm::Error error =
              check(*b.api,
                    b.api->hipMemcpy(b.working[i], b.sets[currentSet][i],
                                     b.bytes[i], hipMemcpyDeviceToDevice),
                    "hipMemcpy (restoring an accumulator)"))
        return error;
      continue;
    }
    if (llvm::Error error =
            check(*b.api,
                  b.api->hipMemset(b.working[i], getPoisonByte(b.kinds[i]),
                                   b.bytes[i]),
                  "hipMemset (poisoning an output)"))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error HipRunner::flushL2() {
  Buffers &b = *buffers;
  return check(*b.api, b.api->hipMemset(b.flush, 0, b.flushBytes),
               "hipMemset (cache flush)");
}

llvm::Expected<double> HipRunner::runTimed() {
  Buffers &b = *buffers;
  const RuntimeApi &api = *b.api;
  if (llvm::Error error =
          check(api, api.hipEventRecord(b.start, nullptr), "hipEventRecord"))
    return std::move(error);
  for (auto [index, launch] : llvm::enumerate(module->launches)) {
    LaunchParameters &params = b.parameters[currentSet][index];
    // The runtime reads each parameter's size and offset from the code
    // object's kernel metadata, as cuLaunchKernel does from the PTX.
    hipError_t result = api.hipModuleLaunchKernel(
        static_cast<hipFunction_t>(module->functions[index]), launch.grid[0],
        launch.grid[1], launch.grid[2], launch.block[0], launch.block[1],
        launch.block[2], launch.dynamicSharedMemoryBytes, nullptr,
        params.data(), nullptr);
    if (llvm::Error error =
            check(api, result,
                  llvm::formatv("hipModuleLaunchKernel({0}, grid {1}x{2}x{3}, "
                                "block {4}x{5}x{6})",
                                launch.kernelName, launch.grid[0],
                                launch.grid[1], launch.grid[2], launch.block[0],
                                launch.block[1], launch.block[2])
                      .str()))
      return std::move(error);
  }
  if (llvm::Error error =
          check(api, api.hipEventRecord(b.stop, nullptr), "hipEventRecord"))
    return std::move(error);
  // A fault inside a kernel (memory access fault, trap) surfaces here.
  if (llvm::Error error = check(api, api.hipEventSynchronize(b.stop),
                                "running the kernels"))
    return std::move(error);
  float milliseconds = 0;
  if (llvm::Error error =
          check(api, api.hipEventElapsedTime(&milliseconds, b.start, b.stop),
                "hipEventElapsedTime"))
    return std::move(error);
  return double(milliseconds) * 1e-3;
}

llvm::Error HipRunner::download(llvm::MutableArrayRef<HostBuffer> hosts) {
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
            b.api->hipMemcpy(hosts[i].getData(), b.working[i],
                             std::min(b.bytes[i], hosts[i].getSizeInBytes()),
                             hipMemcpyDeviceToHost),
            "hipMemcpy (device to host)"))
      return error;
  }
  return llvm::Error::success();
}

llvm::Expected<Measurement> HipRunner::measure(const MeasureOptions &options,
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

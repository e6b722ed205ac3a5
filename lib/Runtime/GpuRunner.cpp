//===- GpuRunner.cpp - Running lowered kernels on a GPU -------------------===//

#include "ke/Runtime/GpuRunner.h"

#include "GpuApi.h"

#include "ke/Runtime/L2Flush.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>

using namespace ke;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Device code
//===----------------------------------------------------------------------===//

GpuModule::~GpuModule() {
  if (module)
    api->moduleUnload(module);
}

llvm::Error GpuModule::checkLaunchShape(const GpuLaunch &launch,
                                        unsigned maxThreadsPerBlock) {
  uint64_t threads =
      uint64_t(launch.block[0]) * launch.block[1] * launch.block[2];
  if (threads == 0 ||
      uint64_t(launch.grid[0]) * launch.grid[1] * launch.grid[2] == 0)
    return makeError("launch of " + launch.kernelName +
                     " has an empty grid or block");
  if (maxThreadsPerBlock && threads > maxThreadsPerBlock)
    return makeError(llvm::formatv(
        "launch of {0}: {1} threads per block, the device allows {2}",
        launch.kernelName, threads, maxThreadsPerBlock));
  return llvm::Error::success();
}

llvm::Error GpuModule::checkImage(llvm::StringRef image) {
  if (image.empty())
    return makeError("the GPU binary is empty");
  return llvm::Error::success();
}

llvm::Error GpuModule::loadLaunches(const GpuKernelBinary &binary,
                                    const GpuDeviceInfo &info,
                                    uint64_t lastLevelCacheBytes,
                                    const SharedMemoryLimits &limits) {
  // Twice the cache, so that nothing the previous run left there survives.
  flushBytes = 2 * (lastLevelCacheBytes ? lastLevelCacheBytes : 32ull << 20);
  multiprocessors = info.multiprocessors;
  launches = binary.launches;
  scratch = binary.scratch;
  tensorMaps = binary.tensorMaps;
  if (!tensorMaps.empty() && !api->encodeTensorMap)
    return makeError("the module copies with TMA tensor maps, which only "
                     "CUDA drivers of 12.0 and later encode");
  for (const GpuLaunch &launch : binary.launches) {
    void *function = nullptr;
    if (llvm::Error error = api->check(
            api->getFunction(&function, module, launch.kernelName.c_str()),
            llvm::Twine(api->names.getFunction) + "('" + launch.kernelName +
                "')"))
      return error;
    if (llvm::Error error = checkLaunchShape(launch, info.maxThreadsPerBlock))
      return error;
    uint32_t sharedBytes = launch.dynamicSharedMemoryBytes;
    if (sharedBytes > limits.withoutOptInBytes) {
      if (limits.maxBytes && sharedBytes > limits.maxBytes)
        return makeError(llvm::formatv(
            "launch of {0}: {1} bytes of dynamic {2}, the device allows {3} "
            "per {4}",
            launch.kernelName, sharedBytes, limits.memory, limits.maxBytes,
            limits.unit));
      if (api->optInSharedMemory)
        if (llvm::Error error = api->check(
                api->optInSharedMemory(function, int(sharedBytes)),
                llvm::Twine(api->names.optInSharedMemory) +
                    "(max dynamic shared memory, " + launch.kernelName + ")"))
          return error;
    }
    functions.push_back(function);
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Running and timing
//===----------------------------------------------------------------------===//

struct GpuRunner::Buffers {
  const GpuApi *api = nullptr;
  std::vector<BufferRole> roles;
  std::vector<ElementKind> kinds;
  std::vector<size_t> bytes;
  /// What the launches use for outputs, scratch and accumulators.
  std::vector<GpuAddress> working;
  /// Pristine inputs and accumulators per set (0 for other arguments).
  std::vector<std::vector<GpuAddress>> sets;
  /// The module's scratch buffers (GpuKernelBinary::scratch), shared by
  /// all sets: every run writes them before it reads them.
  std::vector<GpuAddress> scratch;
  GpuAddress flush = 0;
  size_t flushBytes = 0;
  /// The read-only flush kernel (L2Flush.h) and its launch; null where the
  /// flush is a memset.
  void *flushModule = nullptr, *flushFunction = nullptr;
  GpuLaunch flushLaunch;
  uint64_t flushVectors = 0;
  void *start = nullptr, *stop = nullptr;
  /// Per set, per launch: inputs are read straight from the set's copies.
  std::vector<std::vector<LaunchParameters>> parameters;
  /// The kernel module's arguments (their shapes pack the launches).
  std::vector<KernelArgument> arguments;

  /// Allocates `module`'s scratch buffers (freeing the last module's) and
  /// packs its launches' parameters for every set.
  llvm::Error bind(const GpuModule &module);

  ~Buffers() {
    for (GpuAddress p : working)
      if (p)
        api->memFree(p);
    for (GpuAddress p : scratch)
      if (p)
        api->memFree(p);
    for (const std::vector<GpuAddress> &set : sets)
      for (GpuAddress p : set)
        if (p)
          api->memFree(p);
    if (flush)
      api->memFree(flush);
    if (flushModule)
      api->moduleUnload(flushModule);
    if (start)
      api->eventDestroy(start);
    if (stop)
      api->eventDestroy(stop);
  }

  llvm::Expected<GpuAddress> allocate(size_t size, const llvm::Twine &what) {
    GpuAddress address = 0;
    // cuMemAlloc refuses 0 bytes; a 0-d or empty buffer still has an address
    // of its own.
    if (llvm::Error error =
            api->check(api->memAlloc(&address, std::max<size_t>(size, 256)),
                       llvm::formatv("{0}({1} bytes for {2})",
                                     api->names.memAlloc, size, what.str())))
      return std::move(error);
    return address;
  }

  /// Loads the flush kernel where the runtime can; otherwise, or when that
  /// fails, flushL2 stays a memset. A failure is no error of the candidate
  /// (the timing still works, with the old flush), but it is said once per
  /// process, since it makes memory-bound timings slower than they are.
  void loadFlushKernel(unsigned multiprocessors) {
    if (!api->loadPtxFunction)
      return;
    int result = api->loadPtxFunction(&flushModule, &flushFunction,
                                      getL2FlushKernelPtx(),
                                      kL2FlushKernelName);
    if (result != 0) {
      flushModule = flushFunction = nullptr;
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true))
        llvm::errs() << "ke: warning: the L2 flush kernel did not load ("
                     << api->describe(result) << "); flushing with "
                     << api->names.memset
                     << " instead, which leaves dirty lines in the L2 that "
                        "each timed run pays to write back "
                        "(docs/measurement.md)\n";
      return;
    }
    L2FlushLaunch shape = getL2FlushLaunch(flushBytes, multiprocessors);
    flushVectors = shape.vectors;
    flushLaunch.kernelName = kL2FlushKernelName;
    flushLaunch.grid = {shape.blocks, 1, 1};
    flushLaunch.block = {shape.threads, 1, 1};
  }
};

GpuRunner::~GpuRunner() = default;

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

llvm::Expected<std::unique_ptr<GpuRunner>>
GpuRunner::create(GpuModule &module, llvm::ArrayRef<KernelArgument> arguments,
                  llvm::ArrayRef<std::vector<HostBuffer>> inputSets) {
  if (inputSets.empty())
    return makeError("no input sets");
  for (const std::vector<HostBuffer> &set : inputSets)
    if (set.size() != arguments.size())
      return makeError("an input set does not match the kernel's arguments");
  std::unique_ptr<GpuRunner> runner(new GpuRunner());
  runner->module = &module;
  runner->buffers = std::make_unique<Buffers>();
  Buffers &b = *runner->buffers;
  b.api = module.api;
  const GpuApi &api = *b.api;

  for (auto [index, argument] : llvm::enumerate(arguments)) {
    b.roles.push_back(argument.role);
    b.kinds.push_back(inputSets[0][index].getKind());
    b.bytes.push_back(inputSets[0][index].getSizeInBytes());
    GpuAddress working = 0;
    if (argument.role != BufferRole::Input) {
      llvm::Expected<GpuAddress> allocated =
          b.allocate(b.bytes.back(), "argument #" + llvm::Twine(index));
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
      llvm::Expected<GpuAddress> allocated =
          b.allocate(b.bytes[index], "input #" + llvm::Twine(index));
      if (!allocated)
        return allocated.takeError();
      b.sets.back()[index] = *allocated;
      if (llvm::Error error =
              api.check(api.copyToDevice(*allocated, set[index].getData(),
                                         b.bytes[index]),
                        api.names.copyToDevice))
        return std::move(error);
    }
  }

  b.arguments.assign(arguments.begin(), arguments.end());
  if (llvm::Error error = b.bind(module))
    return std::move(error);

  b.flushBytes = module.flushBytes;
  llvm::Expected<GpuAddress> flush = b.allocate(b.flushBytes, api.names.flush);
  if (!flush)
    return flush.takeError();
  b.flush = *flush;
  // Zeroed once: the flush kernel then reads the same bytes every run (and
  // its guarded store never fires).
  if (llvm::Error error =
          api.check(api.memset(b.flush, 0, b.flushBytes),
                    llvm::Twine(api.names.memset) + " (" + api.names.flush +
                        " buffer)"))
    return std::move(error);
  b.loadFlushKernel(module.multiprocessors);
  if (llvm::Error error =
          api.check(api.eventCreate(&b.start), api.names.eventCreate))
    return std::move(error);
  if (llvm::Error error =
          api.check(api.eventCreate(&b.stop), api.names.eventCreate))
    return std::move(error);
  return runner;
}

llvm::Error GpuRunner::Buffers::bind(const GpuModule &module) {
  for (GpuAddress p : scratch)
    if (p)
      api->memFree(p);
  scratch.clear();
  parameters.clear();
  for (auto [index, buffer] : llvm::enumerate(module.scratch)) {
    llvm::Expected<GpuAddress> allocated =
        allocate(buffer.bytes, "scratch #" + llvm::Twine(index));
    if (!allocated)
      return allocated.takeError();
    scratch.push_back(*allocated);
  }
  std::vector<DeviceBufferRef> scratchRefs;
  for (auto [index, buffer] : llvm::enumerate(module.scratch))
    scratchRefs.push_back({scratch[index], buffer.shape});
  // Tensor maps are encoded over each set's buffers (the driver's
  // cuTensorMapEncodeTiled, host-side) and passed by value.
  auto encode = [&](const GpuTensorMap &map, uint64_t address,
                    unsigned char *out) -> llvm::Error {
    return api->check(api->encodeTensorMap(out, map, address),
                      api->names.encodeTensorMap);
  };
  for (const std::vector<GpuAddress> &set : sets) {
    std::vector<DeviceBufferRef> refs;
    for (auto [index, argument] : llvm::enumerate(arguments))
      refs.push_back(
          {argument.role == BufferRole::Input ? set[index] : working[index],
           argument.shape});
    parameters.emplace_back();
    for (const GpuLaunch &launch : module.launches) {
      llvm::Expected<LaunchParameters> packed = packLaunchArguments(
          launch, refs, scratchRefs, module.tensorMaps, encode);
      if (!packed)
        return packed.takeError();
      parameters.back().push_back(std::move(*packed));
    }
  }
  return llvm::Error::success();
}

llvm::Error GpuRunner::setModule(GpuModule &next) {
  // The last module may be unloaded already: only the buffers are asked.
  if (next.api != buffers->api || next.flushBytes != buffers->flushBytes)
    return makeError("a module of another device");
  module = &next;
  return buffers->bind(next);
}

llvm::Error GpuRunner::prepare(unsigned set) {
  Buffers &b = *buffers;
  const GpuApi &api = *b.api;
  currentSet = set % b.sets.size();
  for (size_t i = 0; i < b.roles.size(); ++i) {
    if (b.roles[i] == BufferRole::Input)
      continue;
    if (b.roles[i] == BufferRole::Accumulator) {
      if (llvm::Error error = api.check(
              api.copyOnDevice(b.working[i], b.sets[currentSet][i], b.bytes[i]),
              llvm::Twine(api.names.copyOnDevice) +
                  " (restoring an accumulator)"))
        return error;
      continue;
    }
    if (llvm::Error error = api.check(
            api.memset(b.working[i], getPoisonByte(b.kinds[i]), b.bytes[i]),
            llvm::Twine(api.names.memset) + " (poisoning an output)"))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error GpuRunner::flushL2() {
  Buffers &b = *buffers;
  const GpuApi &api = *b.api;
  if (!b.flushFunction)
    return api.check(api.memset(b.flush, 0, b.flushBytes),
                     llvm::Twine(api.names.memset) + " (" + api.names.flush +
                         ")");
  // Reading leaves clean lines: evicting them costs the timed kernels
  // nothing, where a memset's dirty lines cost them a write-back each.
  uint64_t address = b.flush, vectors = b.flushVectors;
  uint32_t magic = kL2FlushMagic;
  void *parameters[] = {&address, &vectors, &magic};
  return api.check(api.launch(b.flushFunction, b.flushLaunch, parameters),
                   llvm::Twine(api.names.launch) + " (" + api.names.flush +
                       ")");
}

bool GpuRunner::flushesByReading() const {
  return buffers->flushFunction != nullptr;
}

llvm::Expected<double> GpuRunner::runTimed() {
  Buffers &b = *buffers;
  const GpuApi &api = *b.api;
  if (llvm::Error error =
          api.check(api.eventRecord(b.start), api.names.eventRecord))
    return std::move(error);
  for (auto [index, launch] : llvm::enumerate(module->launches)) {
    LaunchParameters &params = b.parameters[currentSet][index];
    // The driver reads each parameter's size and offset from the kernel (its
    // PTX signature, its code object's metadata).
    if (llvm::Error error = api.check(
            api.launch(module->functions[index], launch, params.data()),
            llvm::formatv("{0}({1}, grid {2}x{3}x{4}, block {5}x{6}x{7})",
                          api.names.launch, launch.kernelName, launch.grid[0],
                          launch.grid[1], launch.grid[2], launch.block[0],
                          launch.block[1], launch.block[2])))
      return std::move(error);
  }
  if (llvm::Error error =
          api.check(api.eventRecord(b.stop), api.names.eventRecord))
    return std::move(error);
  // A fault inside a kernel (illegal address, trap) surfaces here.
  if (llvm::Error error =
          api.check(api.eventSynchronize(b.stop), "running the kernels"))
    return std::move(error);
  float milliseconds = 0;
  if (llvm::Error error =
          api.check(api.eventElapsedTime(&milliseconds, b.start, b.stop),
                    api.names.eventElapsedTime))
    return std::move(error);
  return double(milliseconds) * 1e-3;
}

llvm::Error GpuRunner::download(llvm::MutableArrayRef<HostBuffer> hosts) {
  Buffers &b = *buffers;
  const GpuApi &api = *b.api;
  if (hosts.size() != b.roles.size())
    return makeError("download: the host buffers do not match the kernel's "
                     "arguments");
  for (size_t i = 0; i < b.roles.size(); ++i) {
    if (b.roles[i] != BufferRole::Accumulator &&
        b.roles[i] != BufferRole::Output)
      continue;
    if (llvm::Error error = api.check(
            api.copyToHost(hosts[i].getData(), b.working[i],
                           std::min(b.bytes[i], hosts[i].getSizeInBytes())),
            api.names.copyToHost))
      return error;
  }
  return llvm::Error::success();
}

llvm::Expected<Measurement> GpuRunner::measure(const MeasureOptions &options,
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

//===- ToolSupport.cpp - What several subcommands share -------------------===//

#include "ToolSupport.h"
#include "Subcommands.h"

#include "ke/Graph/GraphPreparation.h"
#include "ke/InitAll/InitAll.h"
#include "ke/Runtime/CudaRunner.h"
#include "ke/Runtime/HipRunner.h"
#include "ke/Support/InputFile.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ke;

LoadedInputs ke::loadInputs(llvm::ArrayRef<std::string> files,
                            MLIRContext &context) {
  LoadedInputs inputs;
  for (const std::string &file : files) {
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
    OwningOpRef<ModuleOp> module = parseInputFile(file, context, sourceMgr);
    if (!module) {
      inputs.failed = true;
      continue;
    }
    // Every subcommand sees the same prepared graph (compileModule prepares
    // the same way).
    if (!noPrepareGraphOption &&
        failed(prepareGraph(*module, getGraphPreparationOptions()))) {
      inputs.failed = true;
      continue;
    }
    collectWorkloads(*module, inputs.workloads);
    inputs.modules.push_back(std::move(module));
  }
  return inputs;
}

GraphPreparationOptions ke::getGraphPreparationOptions() {
  GraphPreparationOptions options;
  options.demoteF64 = demoteF64Option;
  return options;
}

std::optional<TargetDescription>
ke::parseTargetOption(llvm::StringRef command) {
  std::string spec = targetOption;
  if (allowTF32Option && !llvm::StringRef(spec).contains("+"))
    spec += "+tf32";
  llvm::Expected<TargetDescription> target = parseTarget(spec);
  if (!target) {
    subcommandError(command) << llvm::toString(target.takeError()) << '\n';
    return std::nullopt;
  }
  return *target;
}

bool ke::requireInputFiles(llvm::StringRef command) {
  if (!inputFiles.empty())
    return true;
  subcommandError(command) << "no input files\n";
  return false;
}

std::unique_ptr<MLIRContext> ke::createToolContext() {
  DialectRegistry registry;
  registerKeDialects(registry);
  auto context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  return context;
}

std::string ke::getDatabasePath() {
  if (!dbOption.empty())
    return dbOption;
  if (const char *env = std::getenv("KE_DB"); env && *env)
    return env;
  return "ke-tuning.db";
}

/// The compute capability in a chip name: 90 for "sm_90" and "sm_90a".
static std::optional<int> getComputeCapability(llvm::StringRef chip) {
  int value = 0;
  if (!chip.consume_front("sm_"))
    return std::nullopt;
  chip = chip.take_while([](char c) { return llvm::isDigit(c); });
  if (chip.getAsInteger(10, value))
    return std::nullopt;
  return value;
}

/// Puts the limits of the probed `device` into `target`, in place of its
/// generation's table values: what the sketch rules size blocks by.
static void applyDeviceLimits(TargetDescription &target,
                              const GpuDeviceInfo &device,
                              uint64_t sharedMemoryPerBlockBytes) {
  target.gpu.multiprocessors = device.multiprocessors;
  if (device.maxThreadsPerBlock)
    target.gpu.maxThreadsPerBlock = device.maxThreadsPerBlock;
  if (sharedMemoryPerBlockBytes)
    target.gpu.sharedMemoryPerBlockBytes = sharedMemoryPerBlockBytes;
}

/// "CUDA device #0 (NAME) is sm_80: code for sm_90 does not run on it; use
/// --target cuda:sm_80".
static llvm::Error wrongDeviceError(const TargetDescription &target,
                                    const GpuDeviceInfo &device,
                                    llvm::StringRef deviceChip) {
  return llvm::createStringError(
      llvm::formatv("{0} #{1} ({2}) is {3}: code for {4} does not run on it; "
                    "use --target {5}:{3}",
                    getGpuDeviceNoun(target), device.ordinal, device.name,
                    deviceChip, target.chip,
                    stringifyTargetFamily(target.family))
          .str());
}

static llvm::Expected<ProbedGpu> checkCudaDevice(TargetDescription &target,
                                                 int ordinal) {
  llvm::Expected<CudaDeviceInfo> device = probeCudaDevice(ordinal);
  if (!device)
    return device.takeError();
  std::optional<int> wanted = getComputeCapability(target.chip);
  int have = device->computeMajor * 10 + device->computeMinor;
  // PTX for sm_XY runs on devices of XY and later (the driver JIT-compiles
  // it); arch-specific targets (sm_90a) run on XY only.
  bool specific = llvm::StringRef(target.chip).ends_with("a");
  if (wanted && (have < *wanted || (specific && have != *wanted)))
    return wrongDeviceError(target, *device, device->getChip());
  // Blocks may opt in to more shared memory than the default 48 KiB.
  applyDeviceLimits(target, *device, device->sharedMemoryPerBlockOptinBytes);
  std::string description =
      llvm::formatv("CUDA device #{0}: {1} ({2}, {3} SMs, {4} MiB L2, "
                    "driver {5}.{6}, bus {7})",
                    device->ordinal, device->name, device->getChip(),
                    device->multiprocessors, device->l2CacheBytes >> 20,
                    device->driverVersion / 1000,
                    device->driverVersion % 1000 / 10, device->getPciBusId())
          .str();
  return ProbedGpu{std::move(description), device->toJSON()};
}

static llvm::Expected<ProbedGpu> checkHipDevice(TargetDescription &target,
                                                int ordinal) {
  llvm::Expected<HipDeviceInfo> device = probeHipDevice(ordinal);
  if (!device)
    return device.takeError();
  // A code object runs on the processor it was built for only.
  if (device->getChip() != target.chip)
    return wrongDeviceError(target, *device, device->getChip());
  applyDeviceLimits(target, *device, device->sharedMemoryPerBlockBytes);
  std::string description =
      llvm::formatv("AMD GPU #{0}: {1} ({2}, {3} CUs, {4} MiB L2, HIP "
                    "{5}.{6})",
                    device->ordinal, device->name, device->gcnArchName,
                    device->multiprocessors, device->l2CacheBytes >> 20,
                    device->runtimeVersion / 10000000,
                    device->runtimeVersion / 100000 % 100)
          .str();
  return ProbedGpu{std::move(description), device->toJSON()};
}

llvm::StringRef ke::getGpuDeviceNoun(const TargetDescription &target) {
  return target.family == TargetFamily::Rocm ? "AMD GPU" : "CUDA device";
}

llvm::Expected<ProbedGpu> ke::checkGpuDevice(TargetDescription &target,
                                             int ordinal) {
  if (target.family == TargetFamily::Rocm)
    return checkHipDevice(target, ordinal);
  return checkCudaDevice(target, ordinal);
}

std::optional<MeasuredTarget>
ke::prepareMeasuredTarget(llvm::StringRef command, llvm::StringRef what,
                          int ordinal, bool announce) {
  std::optional<TargetDescription> target = parseTargetOption(command);
  if (!target)
    return std::nullopt;
  if (!target->isGpu() && (!target->isCpu() || !target->detectedFromHost)) {
    subcommandError(command)
        << what
        << " measures on this machine: use --target=cpu or a GPU target "
           "(cuda:<sm>, rocm:<gfx>)\n";
    return std::nullopt;
  }
  if (!requireInputFiles(command))
    return std::nullopt;
  MeasuredTarget measured{*target, std::nullopt};
  if (!target->isGpu())
    return measured;
  llvm::Expected<ProbedGpu> probed = checkGpuDevice(measured.target, ordinal);
  if (!probed) {
    subcommandError(command)
        << "no " << getGpuDeviceNoun(*target) << " to measure " << target->name
        << " on: " << llvm::toString(probed.takeError()) << "\n";
    return std::nullopt;
  }
  measured.device = std::move(*probed);
  if (announce)
    llvm::errs() << "[ke] measuring on " << measured.device->description
                 << "\n";
  return measured;
}

static llvm::cl::opt<ReferencePlace> referencePlace(
    "reference",
    llvm::cl::desc("Where a GPU target's reference (the unscheduled kernel as "
             "plain loops) runs"),
    llvm::cl::values(clEnumValN(ReferencePlace::Auto, "auto",
                          "the device for workloads over 10 GFLOP or 1 GiB "
                          "of buffers, else this CPU (default)"),
               clEnumValN(ReferencePlace::Cpu, "cpu", "this machine's CPU"),
               clEnumValN(ReferencePlace::Device, "device",
                          "the device, one thread per output point")),
    llvm::cl::init(ReferencePlace::Auto), llvm::cl::sub(getTuneCommand()),
    llvm::cl::sub(getBenchCommand()));

ReferencePlace ke::getReferencePlace() { return referencePlace; }

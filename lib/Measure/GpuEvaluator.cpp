//===- GpuEvaluator.cpp - Build, check and time on a GPU ------------------===//
//
// Map of this file:
//   getDefaultGpuKernelBuilder   ke's GPU lowering, as the build step uses it
//   GpuEvaluator::create         the CPU reference (a CpuEvaluator on the host)
//   DeviceSteps<Runtime>         one candidate on CUDA or HIP: build (lower,
//                                open, load), check, time
//   GpuEvaluator::evaluate       the script, then the steps in a child
//
//===----------------------------------------------------------------------===//

#include "ke/Measure/GpuEvaluator.h"

#include "CandidateSteps.h"

#include "ke/Codegen/GpuPipeline.h"
#include "ke/Runtime/CudaRunner.h"
#include "ke/Runtime/HipRunner.h"

using namespace mlir;
using namespace ke;

GpuKernelBuilder ke::getDefaultGpuKernelBuilder() {
  return
      [](ModuleOp kernel,
         const TargetDescription &target) -> llvm::Expected<GpuKernelBinary> {
        if (!target.isGpu())
          return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                         "no GPU lowering for '" + target.name +
                                             "'");
        // Diagnostics go to the candidate's collector; this is the summary.
        FailureOr<GpuKernelBinary> binary =
            lowerKernelToGpuBinary(kernel, target);
        if (failed(binary))
          return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                         target.family == TargetFamily::Rocm
                                             ? "the ROCDL lowering failed"
                                             : "the NVPTX lowering failed");
        return std::move(*binary);
      };
}

FailureOr<std::unique_ptr<GpuEvaluator>>
GpuEvaluator::create(Operation *anchor, const TargetDescription &target,
                     const EvaluatorOptions &options,
                     GpuKernelBuilder builder) {
  if (!target.isGpu())
    return anchor->emitError("the GPU evaluator measures GPU targets, not '")
           << target.name << "'";
  std::unique_ptr<GpuEvaluator> evaluator(new GpuEvaluator());
  evaluator->target = target;
  evaluator->host = detectHostTarget();
  evaluator->options = options;
  evaluator->builder = std::move(builder);
  // The reference and the input sets are the CPU path's, in a child of its
  // own: same seeds, same outputs, same tolerances.
  FailureOr<std::unique_ptr<CpuEvaluator>> reference =
      CpuEvaluator::create(anchor, evaluator->host, evaluator->options);
  if (failed(reference))
    return failure();
  evaluator->reference = std::move(*reference);
  return evaluator;
}

Operation *GpuEvaluator::getKernelAnchor() const {
  return reference->getKernelAnchor();
}

CandidateRecord GpuEvaluator::evaluateReference() {
  return reference->evaluateReference();
}

namespace {

/// The device and module of one GPU family; the runner is the same
/// GpuRunner for both, so one candidate path serves both.
struct CudaRuntime {
  using Device = CudaDevice;
  using Module = CudaModule;
  using Runner = CudaRunner;
  static auto open(int ordinal) { return openCudaDevice(ordinal); }
};
struct HipRuntime {
  using Device = HipDevice;
  using Module = HipModule;
  using Runner = HipRunner;
  static auto open(int ordinal) { return openHipDevice(ordinal); }
};

/// What a candidate's child does once the schedule is applied, on one GPU
/// family.
template <typename Runtime> struct DeviceSteps {
  using Device = typename Runtime::Device;
  using Module = typename Runtime::Module;
  using Runner = typename Runtime::Runner;

  /// What the build step makes; the runner needs the other two alive.
  struct Built {
    std::unique_ptr<Device> device;
    std::unique_ptr<Module> module;
    std::unique_ptr<Runner> runner;
  };

  llvm::raw_ostream &report;
  const TargetDescription &target;
  const CpuEvaluator &cpu;
  const EvaluatorOptions &options;

  void fail(ErrorClass error, const llvm::Twine &message) {
    writeCandidateReport(report, error, message.str(), nullptr, 0);
  }

  /// The build step: lowered to a binary, the device opened, the binary
  /// loaded, the runner set up on the input sets. std::nullopt after writing
  /// the failure's report.
  std::optional<Built> build(ModuleOp scheduled,
                             const GpuKernelBuilder &builder,
                             const DiagnosticCollector &diagnostics) {
    llvm::Expected<GpuKernelBinary> binary = builder(scheduled, target);
    if (!binary) {
      std::string message = llvm::toString(binary.takeError());
      if (!diagnostics.text.empty())
        message += ": " + diagnostics.text;
      fail(ErrorClass::CompileError, message);
      return std::nullopt;
    }
    Built built;
    llvm::Expected<std::unique_ptr<Device>> device =
        Runtime::open(options.deviceOrdinal);
    if (!device) {
      fail(ErrorClass::LaunchError, llvm::toString(device.takeError()));
      return std::nullopt;
    }
    built.device = std::move(*device);
    llvm::Expected<std::unique_ptr<Module>> module =
        Module::load(*built.device, *binary);
    if (!module) {
      fail(ErrorClass::CompileError, llvm::toString(module.takeError()));
      return std::nullopt;
    }
    built.module = std::move(*module);
    llvm::Expected<std::unique_ptr<Runner>> runner = Runner::create(
        *built.module, cpu.getKernel().arguments, cpu.getInputSets());
    if (!runner) {
      fail(ErrorClass::LaunchError, llvm::toString(runner.takeError()));
      return std::nullopt;
    }
    built.runner = std::move(*runner);
    return built;
  }

  /// The check step: one run on input set 0 (also the warm-up), timed, its
  /// results downloaded and checked against the CPU reference (`worst`: the
  /// largest relative error). The run's seconds; std::nullopt after writing
  /// the failure's report.
  std::optional<double> check(Runner &runner, double &worst) {
    std::vector<HostBuffer> results = cpu.getInputSets()[0];
    llvm::Expected<double> seconds = [&]() -> llvm::Expected<double> {
      if (llvm::Error error = runner.prepare(0))
        return std::move(error);
      if (llvm::Error error = runner.flushL2())
        return std::move(error);
      llvm::Expected<double> seconds = runner.runTimed();
      if (!seconds)
        return seconds.takeError();
      if (llvm::Error error = runner.download(results))
        return std::move(error);
      return *seconds;
    }();
    if (!seconds) {
      fail(ErrorClass::LaunchError, llvm::toString(seconds.takeError()));
      return std::nullopt;
    }
    if (!checkAgainstReference(report, results, cpu.getReferenceOutputs(),
                               worst))
      return std::nullopt;
    return *seconds;
  }

  /// The time step: the runner's measurement protocol (events, L2 flushed,
  /// input sets rotated), or the checked run alone (early stop, timing
  /// budget; docs/measurement.md). Writes the report.
  void time(Runner &runner, double checkSeconds, double worst,
            std::optional<double> bestSeconds) {
    bool tooSlow = isFarSlowerThanBest(checkSeconds, bestSeconds, options);
    if (tooSlow || exceedsTimingBudget(checkSeconds, options))
      return writeSingleRunReport(report, checkSeconds, worst,
                                  /*earlyStop=*/tooSlow);
    MeasureOptions measureOptions = options.measure;
    measureOptions.warmupRuns = 0; // the checked run warmed up
    llvm::Expected<Measurement> measurement =
        runner.measure(measureOptions, /*firstSet=*/1);
    if (!measurement)
      return fail(ErrorClass::LaunchError,
                  llvm::toString(measurement.takeError()));
    writeCandidateReport(report, ErrorClass::None, "", &*measurement, worst);
  }

  /// Build, check and time.
  void run(ModuleOp scheduled, const GpuKernelBuilder &builder,
           const DiagnosticCollector &diagnostics,
           std::optional<double> bestSeconds) {
    std::optional<Built> built = build(scheduled, builder, diagnostics);
    if (!built)
      return;
    double worst = 0;
    if (std::optional<double> checkSeconds = check(*built->runner, worst))
      time(*built->runner, *checkSeconds, worst, bestSeconds);
  }
};

} // namespace

CandidateRecord GpuEvaluator::evaluate(const Schedule &schedule,
                                       std::optional<double> bestSeconds) {
  std::optional<std::string> script =
      writeScriptCrashSafely(schedule, getKernelAnchor(), target);
  if (!script)
    return scriptCrashRecord(schedule);
  ModuleOp kernel = reference->getKernel().module.get();
  // CUDA and HIP are initialized in this child only: the parent forks again
  // for the next candidate, and a forked GPU runtime state is unusable.
  ChildResult child = runInChild(
      [&](llvm::raw_ostream &report) -> int {
        DiagnosticCollector diagnostics(kernel->getContext());
        OwningOpRef<ModuleOp> payload =
            applyCandidateScript(report, kernel, *script, diagnostics);
        if (!payload)
          return 0;
        if (target.family == TargetFamily::Rocm)
          DeviceSteps<HipRuntime>{report, target, *reference, options}.run(
              *payload, builder, diagnostics, bestSeconds);
        else
          DeviceSteps<CudaRuntime>{report, target, *reference, options}.run(
              *payload, builder, diagnostics, bestSeconds);
        return 0;
      },
      options.timeoutSeconds);
  CandidateRecord record = readCandidateReport(child, &schedule);
  record.script = std::move(*script);
  return record;
}

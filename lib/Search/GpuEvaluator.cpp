//===- GpuEvaluator.cpp - Build, run, time and check on a GPU -------------===//

#include "ke/Search/GpuEvaluator.h"

#include "CandidateReport.h"

#include "ke/Codegen/CpuPipeline.h"
#include "ke/Codegen/GpuPipeline.h"
#include "ke/Runtime/ChildProcess.h"
#include "ke/Runtime/CudaRunner.h"
#include "ke/Runtime/HipRunner.h"
#include "ke/Support/CrashSafety.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace ke;

GpuKernelBuilder ke::getDefaultGpuKernelBuilder() {
  return [](ModuleOp kernel, const TargetDescription &target)
             -> llvm::Expected<GpuKernelBinary> {
    if (!target.isGpu())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "no GPU lowering for '" + target.name +
                                         "'");
    // Diagnostics go to the candidate's collector; this is the summary.
    FailureOr<GpuKernelBinary> binary = lowerKernelToGpuBinary(kernel, target);
    if (failed(binary))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          target.family == TargetFamily::Rocm ? "the ROCDL lowering failed"
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
  // GPU kernels take the row reductions an elementwise anchor reads.
  evaluator->options.fusion = getKernelFusion(/*isGpuTarget=*/true);
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
  using Module = CudaModule;
  using Runner = CudaRunner;
  static auto open(int ordinal) { return openCudaDevice(ordinal); }
};
struct HipRuntime {
  using Module = HipModule;
  using Runner = HipRunner;
  static auto open(int ordinal) { return openHipDevice(ordinal); }
};

/// What a candidate's child does once the schedule is applied: lower, open
/// the device, load, check, time. Returns after writing the report.
template <typename Runtime>
void runOnDevice(llvm::raw_ostream &report, ModuleOp scheduled,
                 const TargetDescription &target,
                 const GpuKernelBuilder &builder, const CpuEvaluator &cpu,
                 const EvaluatorOptions &options,
                 std::optional<double> bestSeconds,
                 DiagnosticCollector &diagnostics) {
  auto fail = [&](ErrorClass error, const llvm::Twine &message) {
    writeCandidateReport(report, error, message.str(), nullptr, 0);
  };
  llvm::Expected<GpuKernelBinary> binary = builder(scheduled, target);
  if (!binary) {
    std::string message = llvm::toString(binary.takeError());
    if (!diagnostics.text.empty())
      message += ": " + diagnostics.text;
    return fail(ErrorClass::CompileError, message);
  }
  auto device = Runtime::open(options.deviceOrdinal);
  if (!device)
    return fail(ErrorClass::LaunchError, llvm::toString(device.takeError()));
  using Module = typename Runtime::Module;
  using Runner = typename Runtime::Runner;
  llvm::Expected<std::unique_ptr<Module>> module =
      Module::load(**device, *binary);
  if (!module)
    return fail(ErrorClass::CompileError, llvm::toString(module.takeError()));
  const KernelModule &kernel = cpu.getKernel();
  llvm::Expected<std::unique_ptr<Runner>> runner =
      Runner::create(**module, kernel.arguments, cpu.getInputSets());
  if (!runner)
    return fail(ErrorClass::LaunchError, llvm::toString(runner.takeError()));

  // One checked run on input set 0; it is also the warm-up.
  std::vector<HostBuffer> results = cpu.getInputSets()[0];
  llvm::Expected<double> checkSeconds = [&]() -> llvm::Expected<double> {
    if (llvm::Error error = (*runner)->prepare(0))
      return std::move(error);
    if (llvm::Error error = (*runner)->flushL2())
      return std::move(error);
    llvm::Expected<double> seconds = (*runner)->runTimed();
    if (!seconds)
      return seconds.takeError();
    if (llvm::Error error = (*runner)->download(results))
      return std::move(error);
    return *seconds;
  }();
  if (!checkSeconds)
    return fail(ErrorClass::LaunchError,
                llvm::toString(checkSeconds.takeError()));
  double worst = 0;
  if (!checkAgainstReference(report, results, cpu.getReferenceOutputs(),
                             worst))
    return;

  // Early stop and single long runs as on the CPU (docs/measurement.md).
  bool tooSlow =
      bestSeconds && *checkSeconds > options.earlyStopFactor * *bestSeconds;
  if (tooSlow || *checkSeconds >= options.measure.maxTotalSeconds) {
    Measurement single;
    single.seconds.push_back(*checkSeconds);
    single.median = *checkSeconds;
    return writeCandidateReport(report, ErrorClass::None, "", &single, worst,
                                /*earlyStop=*/tooSlow);
  }
  MeasureOptions measureOptions = options.measure;
  measureOptions.warmupRuns = 0; // the checked run warmed up
  llvm::Expected<Measurement> measurement =
      (*runner)->measure(measureOptions, /*firstSet=*/1);
  if (!measurement)
    return fail(ErrorClass::LaunchError,
                llvm::toString(measurement.takeError()));
  writeCandidateReport(report, ErrorClass::None, "", &*measurement, worst);
}

} // namespace

CandidateRecord GpuEvaluator::evaluate(const Schedule &schedule,
                                       std::optional<double> bestSeconds) {
  std::string script;
  if (!runCrashSafely(
          [&] { script = schedule.getScript(getKernelAnchor(), target); })) {
    CandidateRecord record;
    record.schedule = schedule;
    record.error = ErrorClass::InvalidSchedule;
    record.message = "the sketch rule crashed while writing the script (a "
                     "bug in ke)";
    return record;
  }
  ModuleOp kernel = reference->getKernel().module.get();
  MLIRContext *context = kernel->getContext();
  // CUDA and HIP are initialized in this child only: the parent forks again
  // for the next candidate, and a forked GPU runtime state is unusable.
  ChildResult child = runInChild(
      [&](llvm::raw_ostream &report) -> int {
        DiagnosticCollector diagnostics(context);
        OwningOpRef<ModuleOp> payload = kernel.clone();
        OwningOpRef<ModuleOp> parsed = parseScript(script, context);
        if (!parsed || failed(applySchedule(*payload, *parsed))) {
          writeCandidateReport(report, ErrorClass::InvalidSchedule,
                               diagnostics.text, nullptr, 0);
          return 0;
        }
        if (target.family == TargetFamily::Rocm)
          runOnDevice<HipRuntime>(report, *payload, target, builder,
                                  *reference, options, bestSeconds,
                                  diagnostics);
        else
          runOnDevice<CudaRuntime>(report, *payload, target, builder,
                                   *reference, options, bestSeconds,
                                   diagnostics);
        return 0;
      },
      options.timeoutSeconds);
  return readCandidateReport(child, &schedule);
}

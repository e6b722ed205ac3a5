//===- CpuEvaluator.cpp - Build, check and time on this CPU ---------------===//
//
// Map of this file:
//   create          kernel module, seeded input sets, the reference run
//   runCandidate    one candidate in a child: build, check, time
//   build           script applied, lowered (CpuPipeline.h), JIT-compiled
//   check           one run on input set 0 against the reference (or, for
//                   the reference itself, its outputs written to a file)
//   time            the measurement protocol, input sets rotated
//
//===----------------------------------------------------------------------===//

#include "ke/Measure/CpuEvaluator.h"

#include "CandidateSteps.h"

#include "ke/Codegen/CpuPipeline.h"
#include "ke/Codegen/GpuReference.h"
#include "ke/Codegen/PassPipeline.h"
#include "ke/Codegen/Passes.h"
#include "ke/Runtime/CpuExecutable.h"
#include "ke/Workload/Workload.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace ke;

namespace {

/// Seconds since `start`.
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

Operation *CpuEvaluator::getKernelAnchor() const {
  return findKernelAnchor(*kernel.module);
}

void CpuEvaluator::prepareRun(unsigned set) {
  const std::vector<HostBuffer> &source = inputSets[set % inputSets.size()];
  // Made on first use: a GpuEvaluator that runs its reference on the device
  // never runs the kernel here.
  if (working.empty())
    working = inputSets[0];
  for (auto [index, arg] : llvm::enumerate(kernel.arguments)) {
    if (arg.role == BufferRole::Output || arg.role == BufferRole::Scratch)
      working[index].poison();
    else
      working[index].copyFrom(source[index]);
  }
}

FailureOr<std::unique_ptr<CpuEvaluator>>
CpuEvaluator::create(Operation *anchor, const TargetDescription &target,
                     const EvaluatorOptions &options, bool runReference) {
  if (!target.isCpu() || !target.detectedFromHost)
    return anchor->emitError("can only measure on this machine's CPU "
                             "(target 'cpu'), not '")
           << target.name << "'";
  FailureOr<KernelModule> kernel = buildKernelModule(anchor, options.fusion);
  if (failed(kernel))
    return failure();
  std::unique_ptr<CpuEvaluator> evaluator(new CpuEvaluator());
  evaluator->target = &target;
  evaluator->options = options;
  evaluator->kernel = std::move(*kernel);

  uint64_t setBytes = 0;
  for (const KernelArgument &arg : evaluator->kernel.arguments) {
    std::optional<ElementKind> kind = getElementKind(arg.elementType);
    if (!kind)
      return anchor->emitError("element type ")
             << arg.elementType << " is not supported by the CPU runner";
    setBytes += arg.numElements() * getElementBytes(*kind);
  }
  unsigned numSets = std::clamp<uint64_t>(
      options.maxInputBytes / std::max<uint64_t>(setBytes, 1), 1, 3);
  for (unsigned set = 0; set < numSets; ++set) {
    std::vector<HostBuffer> buffers;
    for (auto [index, arg] : llvm::enumerate(evaluator->kernel.arguments)) {
      HostBuffer buffer(arg.shape, *getElementKind(arg.elementType));
      // Outputs and scratch are poisoned before every run: only what the
      // kernel reads needs values (gigabytes at KernelBench's sizes).
      if (arg.role == BufferRole::Input || arg.role == BufferRole::Accumulator)
        buffer.fillRandom(options.seed * 1000003 + set * 101 + index);
      buffers.push_back(std::move(buffer));
    }
    evaluator->inputSets.push_back(std::move(buffers));
  }

  if (runReference && failed(evaluator->runReference(anchor)))
    return failure();
  return evaluator;
}

LogicalResult CpuEvaluator::runReference(Operation *anchor) {
  // The reference runs plain loops, at a fraction of a GFLOP/s: big problems
  // (8205x5921x2949 matmul: 286 GFLOP) get a limit that fits their work.
  referenceTimeoutSeconds = options.timeoutSeconds;
  if (std::optional<uint64_t> flops = countFlops(anchor))
    referenceTimeoutSeconds =
        std::max(options.timeoutSeconds, 4.0 * double(*flops) / 0.25e9);

  // The reference: run unscheduled in a child, outputs back through a file.
  FailureOr<llvm::SmallString<128>> path = createReferenceFile(anchor);
  if (failed(path))
    return failure();
  llvm::scope_exit removeFile([&] { llvm::sys::fs::remove(*path); });
  // The same run is timed: big references run once, not twice.
  CandidateRecord record = runCandidate(nullptr, *path, std::nullopt);
  referenceRecord = record;
  if (!record.isValid())
    return anchor->emitError("the reference (unscheduled) kernel failed: ")
           << stringifyErrorClass(record.error) << ": " << record.message;
  FailureOr<std::vector<std::optional<HostBuffer>>> outputs =
      readReferenceOutputs(anchor, *path, kernel.arguments);
  if (failed(outputs))
    return failure();
  reference = std::move(*outputs);
  return success();
}

std::unique_ptr<CpuExecutable> CpuEvaluator::build(llvm::raw_ostream &report,
                                                   llvm::StringRef script,
                                                   unsigned threads,
                                                   bool isReference,
                                                   bool inF64) const {
  ModuleOp kernelModule = kernel.module.get();
  DiagnosticCollector diagnostics(kernelModule.getContext());
  OwningOpRef<ModuleOp> payload =
      applyCandidateScript(report, kernelModule, script, diagnostics);
  if (!payload || !checkVectorSizes(report, *payload))
    return nullptr;
  if (inF64 && failed(runPipeline(*payload, {PassStep{[] {
                                    return createWidenReferenceFloatsPass();
                                  }}}))) {
    writeCandidateReport(report, ErrorClass::CompileError, diagnostics.text,
                         nullptr, 0);
    return nullptr;
  }
  CpuLoweringOptions lowering;
  lowering.numThreads = threads;
  // The reference runs its parallel loops on every core: big ones take
  // minutes on plain loops (same results, see CpuLoweringOptions). Where
  // LLVM's OpenMP runtime is missing (a GPU machine without LLVM), it runs
  // plain loops.
  if (isReference && findOpenMPRuntime())
    lowering.referenceThreads = target->cpu.cores;
  if (failed(lowerKernelToLLVM(*payload, lowering))) {
    writeCandidateReport(report, ErrorClass::CompileError, diagnostics.text,
                         nullptr, 0);
    return nullptr;
  }
  llvm::Expected<std::unique_ptr<CpuExecutable>> executable =
      CpuExecutable::create(*payload);
  if (!executable) {
    writeCandidateReport(report, ErrorClass::CompileError,
                         llvm::toString(executable.takeError()), nullptr, 0);
    return nullptr;
  }
  return std::move(*executable);
}

std::optional<double> CpuEvaluator::runOnce(llvm::raw_ostream &report,
                                            CpuExecutable &executable) {
  prepareRun(0);
  auto start = std::chrono::steady_clock::now();
  if (llvm::Error error = executable.run(working)) {
    writeCandidateReport(report, ErrorClass::LaunchError,
                         llvm::toString(std::move(error)), nullptr, 0);
    return std::nullopt;
  }
  return secondsSince(start);
}

std::optional<double> CpuEvaluator::check(llvm::raw_ostream &report,
                                          CpuExecutable &executable,
                                          llvm::StringRef referenceFile,
                                          double &worst) {
  // One checked run on input set 0; it is also the warm-up.
  std::optional<double> ran = runOnce(report, executable);
  if (!ran)
    return std::nullopt;
  double seconds = *ran;
  if (referenceFile.empty()) {
    if (!checkAgainstReference(report, working, reference, worst))
      return std::nullopt;
    return seconds;
  }
  if (!writeReferenceOutputs(report, referenceFile, kernel.arguments, working))
    return std::nullopt;
  return seconds;
}

void CpuEvaluator::time(llvm::raw_ostream &report, CpuExecutable &executable,
                        double checkSeconds, double worst,
                        std::optional<double> bestSeconds) {
  // A run that alone exceeds the timing budget is timed by the checked run,
  // which followed its own warm-up of the code.
  if (exceedsTimingBudget(checkSeconds, options))
    return writeSingleRunReport(report, checkSeconds, worst,
                                /*earlyStop=*/false);
  // The checked run is the first call and pays one-time costs (the OpenMP
  // thread pool starts in it: about a millisecond, more than small kernels
  // take), so the first timed run decides whether a candidate far slower
  // than the best stops early.
  auto timeOneRun = [&](unsigned set) -> llvm::Expected<double> {
    prepareRun(set);
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error error = executable.run(working))
      return std::move(error);
    return secondsSince(start);
  };
  llvm::Expected<double> first = timeOneRun(1);
  if (!first)
    return writeCandidateReport(report, ErrorClass::LaunchError,
                                llvm::toString(first.takeError()), nullptr, 0);
  if (isFarSlowerThanBest(*first, bestSeconds, options))
    return writeSingleRunReport(report, *first, worst, /*earlyStop=*/true);
  MeasureOptions measureOptions = options.measure;
  measureOptions.warmupRuns = 0; // the checked run warmed up
  unsigned set = 1;
  llvm::Expected<Measurement> measurement = measureRuns(
      [&]() -> llvm::Expected<double> {
        if (set == 1) { // the first timed run, already made
          ++set;
          return *first;
        }
        return timeOneRun(set++);
      },
      measureOptions);
  if (!measurement)
    return writeCandidateReport(report, ErrorClass::LaunchError,
                                llvm::toString(measurement.takeError()),
                                nullptr, 0);
  writeCandidateReport(report, ErrorClass::None, "", &*measurement, worst);
}

CandidateRecord CpuEvaluator::runCandidate(const Schedule *schedule,
                                           llvm::StringRef referenceFile,
                                           std::optional<double> bestSeconds) {
  std::string script = getReferenceScript().str();
  if (schedule) {
    std::optional<std::string> written =
        writeScriptCrashSafely(*schedule, getKernelAnchor(), *target);
    if (!written)
      return scriptCrashRecord(*schedule);
    script = std::move(*written);
  }
  unsigned threads =
      schedule ? unsigned(schedule->getAssignment().get("threads", 0)) : 0;

  ChildResult child = runInChild(
      [&](llvm::raw_ostream &report) -> int {
        // Pinned threads (measurement protocol), unless the user chose a
        // placement: libomp reads these when its first parallel region runs.
        setenv("OMP_PROC_BIND", "close", /*overwrite=*/0);
        setenv("OMP_PLACES", "cores", /*overwrite=*/0);
        double worst = 0;
        // The reference's outputs come from the kernel computed in f64
        // (ke-widen-reference-floats: a sequential f32 or 16-bit sum is
        // itself off by more than a more accurate schedule); its time is
        // the kernel's as written, warmed up by one run.
        if (!schedule) {
          std::unique_ptr<CpuExecutable> accurate =
              build(report, script, threads, /*isReference=*/true,
                    /*inF64=*/true);
          if (!accurate || !check(report, *accurate, referenceFile, worst))
            return 0;
        }
        std::unique_ptr<CpuExecutable> executable =
            build(report, script, threads, /*isReference=*/!schedule);
        if (!executable)
          return 0;
        std::optional<double> checkSeconds =
            schedule ? check(report, *executable, referenceFile, worst)
                     : runOnce(report, *executable);
        if (checkSeconds)
          time(report, *executable, *checkSeconds, worst, bestSeconds);
        return 0;
      },
      schedule ? options.timeoutSeconds : referenceTimeoutSeconds);

  CandidateRecord record = readCandidateReport(child, schedule);
  if (schedule)
    record.script = std::move(script);
  return record;
}

CandidateRecord CpuEvaluator::evaluate(const Schedule &schedule,
                                       std::optional<double> bestSeconds) {
  return runCandidate(&schedule, "", bestSeconds);
}

CandidateRecord CpuEvaluator::evaluateReference() { return referenceRecord; }

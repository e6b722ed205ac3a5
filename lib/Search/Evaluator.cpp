//===- Evaluator.cpp - Build, run, time and check one candidate -----------===//

#include "ke/Search/Evaluator.h"

#include "CandidateReport.h"

#include "ke/Search/GpuEvaluator.h"

#include "ke/Codegen/CpuPipeline.h"
#include "ke/Codegen/GpuPipeline.h"
#include "ke/Runtime/ChildProcess.h"
#include "ke/Runtime/CpuExecutable.h"
#include "ke/Support/CrashSafety.h"
#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace ke;

llvm::StringRef ke::stringifyErrorClass(ErrorClass error) {
  switch (error) {
  case ErrorClass::None: return "none";
  case ErrorClass::InvalidSchedule: return "invalid-schedule";
  case ErrorClass::CompileError: return "compile-error";
  case ErrorClass::LaunchError: return "launch-error";
  case ErrorClass::Timeout: return "timeout";
  case ErrorClass::Crash: return "crash";
  case ErrorClass::WrongResult: return "wrong-result";
  }
  return "?";
}

std::optional<ErrorClass> ke::parseErrorClass(llvm::StringRef text) {
  for (unsigned i = 0; i < kNumErrorClasses; ++i)
    if (stringifyErrorClass(ErrorClass(i)) == text)
      return ErrorClass(i);
  return std::nullopt;
}

llvm::json::Value CandidateRecord::toJSON() const {
  llvm::json::Object o;
  o["schedule"] = schedule ? schedule->toJSON() : llvm::json::Value(nullptr);
  o["error"] = stringifyErrorClass(error);
  if (!message.empty())
    o["message"] = message;
  if (isValid()) {
    o["median_seconds"] = measurement.median;
    if (earlyStop)
      o["early_stop"] = true;
    o["seconds"] = llvm::json::Array(measurement.seconds);
    o["relative_error"] = relativeError;
  }
  return o;
}

namespace {

/// The reference lowering needs ops that convert-linalg-to-loops does not
/// handle broken into ones it does: linalg.softmax is decomposed into the
/// generics that define its semantics.
constexpr llvm::StringLiteral kReferenceScript = R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %softmax = transform.structured.match ops{["linalg.softmax"]} in %root : (!transform.any_op) -> !transform.any_op
    %parts = transform.structured.decompose_interface %softmax : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
)mlir";

} // namespace

Evaluator::~Evaluator() = default;

FailureOr<std::unique_ptr<Evaluator>>
ke::createEvaluator(Operation *anchor, const TargetDescription &target,
                    const EvaluatorOptions &options) {
  if (target.isGpu()) {
    FailureOr<std::unique_ptr<GpuEvaluator>> gpu =
        GpuEvaluator::create(anchor, target, options);
    if (failed(gpu))
      return failure();
    return std::unique_ptr<Evaluator>(std::move(*gpu));
  }
  FailureOr<std::unique_ptr<CpuEvaluator>> cpu =
      CpuEvaluator::create(anchor, target, options);
  if (failed(cpu))
    return failure();
  return std::unique_ptr<Evaluator>(std::move(*cpu));
}

std::string ke::getPipelineHash(const TargetDescription &target) {
  return target.isGpu() ? getGpuPipelineHash(target) : getCpuPipelineHash();
}

Operation *CpuEvaluator::getKernelAnchor() const {
  return findKernelAnchor(*kernel.module);
}

void CpuEvaluator::prepareRun(unsigned set) {
  const std::vector<HostBuffer> &source = inputSets[set % inputSets.size()];
  for (auto [index, arg] : llvm::enumerate(kernel.arguments)) {
    if (arg.role == BufferRole::Output || arg.role == BufferRole::Scratch)
      working[index].poison();
    else
      working[index].copyFrom(source[index]);
  }
}

FailureOr<std::unique_ptr<CpuEvaluator>>
CpuEvaluator::create(Operation *anchor, const TargetDescription &target,
                     const EvaluatorOptions &options) {
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
      buffer.fillRandom(options.seed * 1000003 + set * 101 + index);
      buffers.push_back(std::move(buffer));
    }
    evaluator->inputSets.push_back(std::move(buffers));
  }
  evaluator->working = evaluator->inputSets[0];

  // The reference runs plain loops, at a fraction of a GFLOP/s: big problems
  // (8205x5921x2949 matmul: 286 GFLOP) get a limit that fits their work.
  evaluator->referenceTimeoutSeconds = options.timeoutSeconds;
  if (std::optional<uint64_t> flops = countFlops(anchor))
    evaluator->referenceTimeoutSeconds =
        std::max(options.timeoutSeconds, 4.0 * double(*flops) / 0.25e9);

  // The reference: run unscheduled in a child, outputs back through a file.
  llvm::SmallString<128> path;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("ke-reference", "bin", path))
    return anchor->emitError("cannot create a temporary file: ")
           << ec.message();
  llvm::scope_exit removeFile([&] { llvm::sys::fs::remove(path); });
  // The same run is timed: big references run once, not twice.
  CandidateRecord record = evaluator->runCandidate(nullptr, path, std::nullopt);
  evaluator->referenceRecord = record;
  if (!record.isValid())
    return anchor->emitError("the reference (unscheduled) kernel failed: ")
           << stringifyErrorClass(record.error) << ": " << record.message;
  auto contents = llvm::MemoryBuffer::getFile(path);
  if (!contents)
    return anchor->emitError("cannot read the reference outputs");
  size_t offset = 0;
  for (auto [index, arg] : llvm::enumerate(evaluator->kernel.arguments)) {
    if (!arg.isResult()) {
      evaluator->reference.push_back(std::nullopt);
      continue;
    }
    HostBuffer buffer(arg.shape, *getElementKind(arg.elementType));
    if (offset + buffer.getSizeInBytes() > (*contents)->getBufferSize())
      return anchor->emitError("the reference outputs are truncated");
    std::memcpy(buffer.getData(), (*contents)->getBufferStart() + offset,
                buffer.getSizeInBytes());
    offset += buffer.getSizeInBytes();
    evaluator->reference.push_back(std::move(buffer));
  }
  return evaluator;
}

CandidateRecord CpuEvaluator::runCandidate(const Schedule *schedule,
                                           llvm::StringRef referenceFile,
                                           std::optional<double> bestSeconds) {
  MLIRContext *context = kernel.module->getContext();
  std::string script = kReferenceScript.str();
  // A bug in a sketch rule must not end a tuning session either: script
  // emission runs under crash recovery, and a crash there is an
  // invalid-schedule record.
  if (schedule && !runCrashSafely([&] {
        script = schedule->getScript(getKernelAnchor(), *target);
      })) {
    CandidateRecord record;
    record.schedule = *schedule;
    record.error = ErrorClass::InvalidSchedule;
    record.message = "the sketch rule crashed while writing the script (a "
                     "bug in ke)";
    return record;
  }
  unsigned threads =
      schedule ? unsigned(schedule->getAssignment().get("threads", 0)) : 0;

  ChildResult child = runInChild(
      [&](llvm::raw_ostream &report) -> int {
        // Pinned threads (measurement protocol), unless the user chose a
        // placement: libomp reads these when its first parallel region runs.
        setenv("OMP_PROC_BIND", "close", /*overwrite=*/0);
        setenv("OMP_PLACES", "cores", /*overwrite=*/0);
        DiagnosticCollector diagnostics(context);
        OwningOpRef<ModuleOp> payload = kernel.module->clone();
        OwningOpRef<ModuleOp> parsed = parseScript(script, context);
        if (!parsed || failed(applySchedule(*payload, *parsed))) {
          writeCandidateReport(report, ErrorClass::InvalidSchedule,
                               diagnostics.text, nullptr, 0);
          return 0;
        }
        CpuLoweringOptions lowering;
        lowering.numThreads = threads;
        // The reference runs its parallel loops on every core: big ones take
        // minutes on plain loops (same results, see CpuLoweringOptions).
        // Where LLVM's OpenMP runtime is missing (a GPU machine without
        // LLVM), it runs plain loops.
        if (!schedule && findOpenMPRuntime())
          lowering.referenceThreads = target->cpu.cores;
        if (failed(lowerKernelToLLVM(*payload, lowering))) {
          writeCandidateReport(report, ErrorClass::CompileError,
                               diagnostics.text, nullptr, 0);
          return 0;
        }
        auto executable = CpuExecutable::create(*payload);
        if (!executable) {
          writeCandidateReport(report, ErrorClass::CompileError,
                               llvm::toString(executable.takeError()), nullptr,
                               0);
          return 0;
        }
        // One checked run on input set 0; it is also the warm-up.
        prepareRun(0);
        auto checkStart = std::chrono::steady_clock::now();
        if (llvm::Error error = (*executable)->run(working)) {
          writeCandidateReport(report, ErrorClass::LaunchError,
                               llvm::toString(std::move(error)), nullptr, 0);
          return 0;
        }
        double checkSeconds = std::chrono::duration<double>(
                                  std::chrono::steady_clock::now() - checkStart)
                                  .count();
        double worst = 0;
        if (!referenceFile.empty()) {
          std::error_code ec;
          llvm::raw_fd_ostream out(referenceFile, ec);
          for (auto [index, arg] : llvm::enumerate(kernel.arguments))
            if (arg.isResult())
              out.write(static_cast<const char *>(working[index].getData()),
                        working[index].getSizeInBytes());
          if (ec || out.has_error()) {
            writeCandidateReport(report, ErrorClass::Crash,
                                 "cannot write the reference outputs", nullptr,
                                 0);
            return 0;
          }
        } else {
          if (!checkAgainstReference(report, working, reference, worst))
            return 0;
        }
        // A run that alone exceeds the timing budget (the plain-loop
        // reference of a big problem runs for minutes) is timed by the
        // checked run, which followed its own warm-up of the code.
        if (checkSeconds >= options.measure.maxTotalSeconds) {
          Measurement single;
          single.seconds.push_back(checkSeconds);
          single.median = checkSeconds;
          writeCandidateReport(report, ErrorClass::None, "", &single, worst);
          return 0;
        }
        // The checked run is the first call and pays one-time costs (the
        // OpenMP thread pool starts in it: about a millisecond, more than
        // small kernels take), so the first timed run decides whether a
        // candidate far slower than the best stops early.
        auto timeOneRun = [&](unsigned set) -> llvm::Expected<double> {
          prepareRun(set);
          auto start = std::chrono::steady_clock::now();
          if (llvm::Error error = (*executable)->run(working))
            return std::move(error);
          return std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start)
              .count();
        };
        llvm::Expected<double> first = timeOneRun(1);
        if (!first) {
          writeCandidateReport(report, ErrorClass::LaunchError,
                               llvm::toString(first.takeError()), nullptr, 0);
          return 0;
        }
        if (bestSeconds && *first > options.earlyStopFactor * *bestSeconds) {
          Measurement single;
          single.seconds.push_back(*first);
          single.median = *first;
          writeCandidateReport(report, ErrorClass::None, "", &single, worst,
                               /*earlyStop=*/true);
          return 0;
        }
        MeasureOptions measureOptions = options.measure;
        measureOptions.warmupRuns = 0; // the checked run warmed up
        unsigned set = 1;
        auto measurement = measureRuns(
            [&]() -> llvm::Expected<double> {
              if (set == 1) { // the first timed run, already made
                ++set;
                return *first;
              }
              return timeOneRun(set++);
            },
            measureOptions);
        if (!measurement) {
          writeCandidateReport(report, ErrorClass::LaunchError,
                               llvm::toString(measurement.takeError()), nullptr,
                               0);
          return 0;
        }
        writeCandidateReport(report, ErrorClass::None, "", &*measurement,
                             worst);
        return 0;
      },
      schedule ? options.timeoutSeconds : referenceTimeoutSeconds);

  return readCandidateReport(child, schedule);
}

CandidateRecord CpuEvaluator::evaluate(const Schedule &schedule,
                                       std::optional<double> bestSeconds) {
  return runCandidate(&schedule, "", bestSeconds);
}

CandidateRecord CpuEvaluator::evaluateReference() { return referenceRecord; }

//===- CandidateSteps.cpp - What every evaluator's child does -------------===//

#include "CandidateSteps.h"

#include "ke/Codegen/CpuPipeline.h"
#include "ke/Support/CrashSafety.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace ke;

DiagnosticCollector::DiagnosticCollector(MLIRContext *context)
    : handler(context, [this](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Error) {
          if (!text.empty())
            text += "; ";
          text += diag.str();
        }
        return success();
      }) {}

std::optional<std::string>
ke::writeScriptCrashSafely(const Schedule &schedule, Operation *kernelAnchor,
                           const TargetDescription &target) {
  std::string script;
  if (!runCrashSafely(
          [&] { script = schedule.getScript(kernelAnchor, target); }))
    return std::nullopt;
  return script;
}

CandidateRecord ke::scriptCrashRecord(const Schedule &schedule) {
  CandidateRecord record;
  record.schedule = schedule;
  record.error = ErrorClass::InvalidSchedule;
  record.message = "the sketch rule crashed while writing the script (a "
                   "bug in ke)";
  return record;
}

OwningOpRef<ModuleOp>
ke::applyCandidateScript(llvm::raw_ostream &report, ModuleOp kernel,
                         llvm::StringRef script,
                         const DiagnosticCollector &diagnostics) {
  OwningOpRef<ModuleOp> payload = kernel.clone();
  OwningOpRef<ModuleOp> parsed = parseScript(script, kernel.getContext());
  if (!parsed || failed(applySchedule(*payload, *parsed))) {
    writeCandidateReport(report, ErrorClass::InvalidSchedule, diagnostics.text,
                         nullptr, 0);
    return nullptr;
  }
  return payload;
}

bool ke::checkVectorSizes(llvm::raw_ostream &report, ModuleOp scheduled) {
  VectorType widest;
  scheduled.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (auto vector = dyn_cast<VectorType>(type))
        if (vector.getNumElements() > kMaxCpuVectorElements &&
            (!widest || vector.getNumElements() > widest.getNumElements()))
          widest = vector;
  });
  if (!widest)
    return true;
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "the schedule makes " << widest << " (" << widest.getNumElements()
     << " elements): straight-line code of that size takes LLVM minutes to "
        "compile (limit "
     << kMaxCpuVectorElements << " elements)";
  writeCandidateReport(report, ErrorClass::CompileError, message, nullptr, 0);
  return false;
}

bool ke::exceedsTimingBudget(double seconds, const EvaluatorOptions &options) {
  return seconds >= options.measure.maxTotalSeconds;
}

bool ke::isFarSlowerThanBest(double seconds, std::optional<double> bestSeconds,
                             const EvaluatorOptions &options) {
  return bestSeconds && seconds > options.earlyStopFactor * *bestSeconds;
}

void ke::writeSingleRunReport(llvm::raw_ostream &report, double seconds,
                              double relativeError, bool earlyStop) {
  Measurement single;
  single.seconds.push_back(seconds);
  single.median = seconds;
  writeCandidateReport(report, ErrorClass::None, "", &single, relativeError,
                       earlyStop);
}

void ke::writeCandidateReport(llvm::raw_ostream &report, ErrorClass error,
                              llvm::StringRef message,
                              const Measurement *measurement,
                              double relativeError, bool earlyStop) {
  // JSON has no NaN or infinity (llvm::json would write an unparsable
  // `nan`): a result with either reports null, read back as infinity.
  llvm::json::Value relative = std::isfinite(relativeError)
                                   ? llvm::json::Value(relativeError)
                                   : llvm::json::Value(nullptr);
  llvm::json::Object o{{"error", stringifyErrorClass(error)},
                       {"message", message},
                       {"relative_error", std::move(relative)},
                       {"early_stop", earlyStop}};
  if (measurement)
    o["seconds"] = llvm::json::Array(measurement->seconds);
  report << llvm::json::Value(std::move(o));
}

bool ke::checkAgainstReference(
    llvm::raw_ostream &report, llvm::ArrayRef<HostBuffer> actual,
    llvm::ArrayRef<std::optional<HostBuffer>> reference, double &worst,
    bool tf32Results) {
  for (auto [index, expected] : llvm::enumerate(reference)) {
    if (!expected)
      continue;
    ElementKind kind = actual[index].getKind();
    double tolerance = tf32Results && kind == ElementKind::F32
                           ? getTF32Tolerance()
                           : getTolerance(kind);
    double error = relativeL2Error(actual[index], *expected);
    worst = std::max(worst, error);
    if (!(error <= tolerance)) {
      std::string message =
          std::isfinite(error)
              ? llvm::formatv("relative L2 error {0:e} in output #{1} exceeds "
                              "the {2} tolerance {3:e}",
                              error, index,
                              tf32Results && kind == ElementKind::F32
                                  ? "tf32"
                                  : stringifyElementKind(kind),
                              tolerance)
                    .str()
              : llvm::formatv("output #{0} holds NaN or infinity (elements "
                              "not written, or computed out of range)",
                              index)
                    .str();
      writeCandidateReport(report, ErrorClass::WrongResult, message, nullptr,
                           error);
      return false;
    }
  }
  return true;
}

CandidateRecord ke::readCandidateReport(const ChildResult &child,
                                        const Schedule *schedule) {
  CandidateRecord record;
  if (schedule)
    record.schedule = *schedule;
  if (child.status == ChildResult::Status::TimedOut) {
    record.error = ErrorClass::Timeout;
    record.message = child.describe();
    return record;
  }
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(child.report);
  const llvm::json::Object *report = parsed ? parsed->getAsObject() : nullptr;
  if (!parsed)
    llvm::consumeError(parsed.takeError());
  if (!child.succeeded() || !report) {
    record.error = ErrorClass::Crash;
    record.message = "the candidate's process ended with " + child.describe();
    return record;
  }
  record.error = parseErrorClass(report->getString("error").value_or("crash"))
                     .value_or(ErrorClass::Crash);
  record.message = report->getString("message").value_or("").str();
  const llvm::json::Value *relativeError = report->get("relative_error");
  record.relativeError = relativeError && relativeError->getAsNull()
                             ? std::numeric_limits<double>::infinity()
                             : report->getNumber("relative_error").value_or(0);
  record.earlyStop = report->getBoolean("early_stop").value_or(false);
  if (const llvm::json::Array *seconds = report->getArray("seconds")) {
    for (const llvm::json::Value &s : *seconds)
      record.measurement.seconds.push_back(s.getAsNumber().value_or(0));
    record.measurement.median = median(record.measurement.seconds);
  }
  return record;
}

bool ke::writeReferenceOutputs(llvm::raw_ostream &report, llvm::StringRef path,
                               llvm::ArrayRef<KernelArgument> arguments,
                               llvm::ArrayRef<HostBuffer> buffers) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  for (auto [index, arg] : llvm::enumerate(arguments))
    if (arg.isResult())
      out.write(static_cast<const char *>(buffers[index].getData()),
                buffers[index].getSizeInBytes());
  out.close();
  if (ec || out.has_error()) {
    writeCandidateReport(report, ErrorClass::Crash,
                         "cannot write the reference outputs", nullptr, 0);
    return false;
  }
  return true;
}

mlir::FailureOr<std::vector<std::optional<HostBuffer>>>
ke::readReferenceOutputs(mlir::Operation *anchor, llvm::StringRef path,
                         llvm::ArrayRef<KernelArgument> arguments) {
  auto contents = llvm::MemoryBuffer::getFile(path);
  if (!contents)
    return anchor->emitError("cannot read the reference outputs");
  std::vector<std::optional<HostBuffer>> outputs;
  size_t offset = 0;
  for (const KernelArgument &arg : arguments) {
    if (!arg.isResult()) {
      outputs.push_back(std::nullopt);
      continue;
    }
    HostBuffer buffer(arg.shape, *getElementKind(arg.elementType));
    if (offset + buffer.getSizeInBytes() > (*contents)->getBufferSize())
      return anchor->emitError("the reference outputs are truncated");
    std::memcpy(buffer.getData(), (*contents)->getBufferStart() + offset,
                buffer.getSizeInBytes());
    offset += buffer.getSizeInBytes();
    outputs.push_back(std::move(buffer));
  }
  return outputs;
}

mlir::FailureOr<llvm::SmallString<128>>
ke::createReferenceFile(mlir::Operation *anchor) {
  llvm::SmallString<128> path;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("ke-reference", "bin", path))
    return anchor->emitError("cannot create a temporary file: ")
           << ec.message();
  return path;
}

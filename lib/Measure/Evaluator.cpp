//===- Evaluator.cpp - The measure interface ------------------------------===//
//
// Map of the Measure component (docs/measurement.md):
//   Evaluator.cpp       failure classes, candidate records as JSON, and
//                       createEvaluator (the evaluator per target family)
//   CpuEvaluator.cpp    this machine's CPU: the reference run, then per
//                       candidate build (JIT), check, time in a child
//   GpuEvaluator.cpp    CUDA and ROCm: the CPU reference, then per candidate
//                       a build child (lower, write the binary), up to
//                       `jobs` at once, and a measuring child (load, check,
//                       time), one at a time
//   GpuBinaryFile.cpp   the lowered binary between the two children
//   CandidateSteps.cpp  what both share of the three steps, and the child's
//                       report
//
//===----------------------------------------------------------------------===//

#include "ke/Measure/Evaluator.h"

#include "ke/Measure/CpuEvaluator.h"
#include "ke/Measure/GpuEvaluator.h"

#include "llvm/Support/Threading.h"

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
  if (!measuredBy.empty())
    o["measured_by"] = measuredBy;
  return o;
}

Evaluator::~Evaluator() = default;

void Evaluator::evaluateBatch(llvm::ArrayRef<Schedule> schedules,
                              BestFn bestSeconds, RecordFn onRecord) {
  for (auto [index, schedule] : llvm::enumerate(schedules))
    onRecord(index, evaluate(schedule, bestSeconds()));
}

unsigned ke::getDefaultBuildJobs() {
  unsigned cores = llvm::heavyweight_hardware_concurrency().compute_thread_count();
  return std::max(1u, cores > 1 ? cores - 1 : 1u);
}

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


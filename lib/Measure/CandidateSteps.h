//===- CandidateSteps.h - What every evaluator's child does -----*- C++ -*-===//
//
// Evaluators run each candidate in a forked child (ke/Runtime/ChildProcess.h)
// in three steps, build, check and time, and the child reports its outcome
// as one JSON object: the error class, a message, the relative error and the
// timed runs. What the CPU and GPU evaluators share of those steps is here:
//   build: the script written under crash recovery, applied to a copy of
//          the kernel (writeScriptCrashSafely, applyCandidateScript);
//   check: the results against the reference (checkAgainstReference);
//   time:  when one run is the whole measurement (exceedsTimingBudget,
//          isFarSlowerThanBest, writeSingleRunReport);
// and the report, both ends (writeCandidateReport, readCandidateReport).
//
// Private to lib/Measure.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_MEASURE_CANDIDATESTEPS_H
#define KE_LIB_MEASURE_CANDIDATESTEPS_H

#include "ke/Measure/Evaluator.h"
#include "ke/Runtime/ChildProcess.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"

namespace ke {

/// Collects error diagnostics as text, so a child can report them.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *context);
  std::string text;

private:
  mlir::ScopedDiagnosticHandler handler;
};

//===----------------------------------------------------------------------===//
// Build
//===----------------------------------------------------------------------===//

/// `schedule`'s script for `kernelAnchor` on `target`, written under crash
/// recovery: a bug in a sketch rule must not end a tuning session.
/// std::nullopt after a crash (scriptCrashRecord is the candidate's record).
std::optional<std::string>
writeScriptCrashSafely(const Schedule &schedule, mlir::Operation *kernelAnchor,
                       const TargetDescription &target);

/// The invalid-schedule record of a candidate whose rule crashed while
/// writing its script.
CandidateRecord scriptCrashRecord(const Schedule &schedule);

/// Vectors of more elements than this in a scheduled CPU kernel are
/// rejected before LLVM sees them: straight-line code of that size takes
/// LLVM minutes to compile (cpu.rfactor's whole-tensor combine of 4096 x 2
/// elements timed every candidate out at 60 s).
inline constexpr int64_t kMaxCpuVectorElements = 4096;

/// In the child: true when no value of `scheduled` is a vector of more than
/// kMaxCpuVectorElements elements; else writes the compile-error report
/// naming the type.
bool checkVectorSizes(llvm::raw_ostream &report, mlir::ModuleOp scheduled);

/// In the child: a copy of `kernel` with `script` applied. On failure,
/// writes the invalid-schedule report (the diagnostics of `diagnostics`)
/// and returns null.
mlir::OwningOpRef<mlir::ModuleOp>
applyCandidateScript(llvm::raw_ostream &report, mlir::ModuleOp kernel,
                     llvm::StringRef script,
                     const DiagnosticCollector &diagnostics);

//===----------------------------------------------------------------------===//
// Check
//===----------------------------------------------------------------------===//

void writeCandidateReport(llvm::raw_ostream &report, ErrorClass error,
                          llvm::StringRef message,
                          const Measurement *measurement, double relativeError,
                          bool earlyStop = false);

/// Compares every result in `actual` (a full argument list) with
/// `reference` (the reference's results, in argument order) by relative L2
/// error; `worst` gets the largest. On a result over its element type's
/// tolerance (f32: TF32's where `tf32Results`), writes the wrong-result
/// report and returns false.
bool checkAgainstReference(llvm::raw_ostream &report,
                           llvm::ArrayRef<HostBuffer> actual,
                           llvm::ArrayRef<std::optional<HostBuffer>> reference,
                           double &worst, bool tf32Results = false);

//===----------------------------------------------------------------------===//
// Time
//===----------------------------------------------------------------------===//

/// Whether one run alone reaches the timing budget (the plain-loop
/// reference of a big problem runs for minutes): it is then the whole
/// measurement.
bool exceedsTimingBudget(double seconds, const EvaluatorOptions &options);

/// Whether a run is so much slower than the best so far that timing the
/// candidate further is a waste (EvaluatorOptions::earlyStopFactor).
bool isFarSlowerThanBest(double seconds, std::optional<double> bestSeconds,
                         const EvaluatorOptions &options);

/// Writes the report of a candidate timed by one run of `seconds`.
void writeSingleRunReport(llvm::raw_ostream &report, double seconds,
                          double relativeError, bool earlyStop);

//===----------------------------------------------------------------------===//
// The report
//===----------------------------------------------------------------------===//

/// The record of `schedule` (none for the reference) from its child's end
/// and report: a timeout, a crash (a signal, a non-zero exit or no readable
/// report) or what the report says.
CandidateRecord readCandidateReport(const ChildResult &child,
                                    const Schedule *schedule);

//===----------------------------------------------------------------------===//
// The reference's outputs, from its child to the parent
//===----------------------------------------------------------------------===//

/// A new temporary file for a reference's outputs. Fails with a diagnostic
/// at `anchor`.
mlir::FailureOr<llvm::SmallString<128>>
createReferenceFile(mlir::Operation *anchor);

/// In the reference's child: writes the result buffers of `buffers` (a full
/// argument list of `arguments`) to `path`, in argument order. On failure,
/// writes the crash report and returns false.
bool writeReferenceOutputs(llvm::raw_ostream &report, llvm::StringRef path,
                           llvm::ArrayRef<KernelArgument> arguments,
                           llvm::ArrayRef<HostBuffer> buffers);

/// In the parent: what writeReferenceOutputs wrote, one entry per argument
/// (none for arguments that are not results). Fails with a diagnostic at
/// `anchor`.
mlir::FailureOr<std::vector<std::optional<HostBuffer>>>
readReferenceOutputs(mlir::Operation *anchor, llvm::StringRef path,
                     llvm::ArrayRef<KernelArgument> arguments);

} // namespace ke

#endif // KE_LIB_MEASURE_CANDIDATESTEPS_H

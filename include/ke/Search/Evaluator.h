//===- Evaluator.h - Build, run, time and check one candidate ---*- C++ -*-===//
//
// An Evaluator judges schedules for one workload on one target. A
// CpuEvaluator holds everything needed to judge schedules on this CPU: the
// kernel module, seeded input sets, and the reference outputs (the kernel
// lowered without a schedule). Each evaluation forks a child that applies
// the schedule, lowers, JIT-compiles, runs on the inputs, checks the result
// against the reference and times it by the measurement protocol; a crash,
// a hang or any failure becomes a classified record.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_EVALUATOR_H
#define KE_SEARCH_EVALUATOR_H

#include "ke/Runtime/HostBuffer.h"
#include "ke/Runtime/Measurement.h"
#include "ke/Schedule/Schedule.h"
#include "ke/Workload/Kernel.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <vector>

namespace ke {

/// Why a candidate has no valid time (docs/measurement.md, Failure classes).
enum class ErrorClass {
  None,
  InvalidSchedule, ///< the transform script failed to parse or apply
  CompileError,    ///< lowering or JIT compilation failed
  LaunchError,     ///< the call itself reported an error
  Timeout,         ///< the child ran past its time limit
  Crash,           ///< the child died (signal) or exited without a report
  WrongResult      ///< the result differs from the reference
};
inline constexpr unsigned kNumErrorClasses = 7;
llvm::StringRef stringifyErrorClass(ErrorClass error);
/// The class named `text` (as stringifyErrorClass writes it), if any.
std::optional<ErrorClass> parseErrorClass(llvm::StringRef text);

/// The outcome of one candidate.
struct CandidateRecord {
  std::optional<Schedule> schedule; ///< none for the reference
  ErrorClass error = ErrorClass::None;
  std::string message;
  Measurement measurement;
  /// Relative L2 error against the reference (for valid candidates).
  double relativeError = 0;
  /// True when timing stopped after the checked run (see EvaluatorOptions).
  bool earlyStop = false;

  bool isValid() const { return error == ErrorClass::None; }
  llvm::json::Value toJSON() const;
};

struct EvaluatorOptions {
  MeasureOptions measure;
  /// Seconds before a child is killed.
  double timeoutSeconds = 60;
  uint64_t seed = 0;
  /// At most this many bytes of rotated input sets (at least one set).
  uint64_t maxInputBytes = 512ull << 20;
  /// A candidate whose checked run takes longer than this factor times the
  /// best time so far is not timed further: its record holds that one run
  /// (`earlyStop`). It cannot become the best, and timing it fully would
  /// spend most of a tuning run on the worst candidates.
  double earlyStopFactor = 10;
  /// The CUDA device that GPU targets run on.
  int deviceOrdinal = 0;
  /// The kernel group measured: GPU evaluators set RowReductions (their
  /// reference runs the same group on the host).
  KernelFusion fusion = KernelFusion::Elementwise;
};

/// Judges schedules for one workload on one target: builds each candidate,
/// runs it in a child process, checks it against the reference and times it.
class Evaluator {
public:
  virtual ~Evaluator();
  /// The anchor inside the kernel module (what schedules are built for).
  virtual mlir::Operation *getKernelAnchor() const = 0;
  /// Builds, runs, checks and times `schedule`. With `bestSeconds`, a
  /// candidate far slower than it stops early (EvaluatorOptions).
  virtual CandidateRecord
  evaluate(const Schedule &schedule,
           std::optional<double> bestSeconds = std::nullopt) = 0;
  /// The reference (unscheduled) kernel's record.
  virtual CandidateRecord evaluateReference() = 0;
};

/// The evaluator of `target`'s family: a CpuEvaluator for this machine's
/// CPU, a GpuEvaluator (ke/Search/GpuEvaluator.h) for CUDA targets. Fails
/// with a diagnostic at `anchor` like their create().
mlir::FailureOr<std::unique_ptr<Evaluator>>
createEvaluator(mlir::Operation *anchor, const TargetDescription &target,
                const EvaluatorOptions &options);

/// The hash of the lowering pipeline that candidates for `target` are built
/// with (getCpuPipelineHash, getGpuPipelineHash): records made under another
/// are stale.
std::string getPipelineHash(const TargetDescription &target);

class CpuEvaluator final : public Evaluator {
public:
  /// Prepares `anchor` for evaluation on `target` (a CPU target for this
  /// host). Fails with a diagnostic at the anchor for unsupported workloads
  /// (dynamic shapes, unsupported element types) or when the reference
  /// cannot be built or run.
  static mlir::FailureOr<std::unique_ptr<CpuEvaluator>>
  create(mlir::Operation *anchor, const TargetDescription &target,
         const EvaluatorOptions &options);

  mlir::Operation *getKernelAnchor() const override;
  CandidateRecord
  evaluate(const Schedule &schedule,
           std::optional<double> bestSeconds = std::nullopt) override;
  /// The reference (unscheduled) kernel's record: timed by the same run in
  /// create() that produced the reference outputs.
  CandidateRecord evaluateReference() override;

  /// What other evaluators reuse (the GpuEvaluator checks against the same
  /// reference on the same inputs): the kernel module, the pristine input
  /// sets, and the reference's outputs for input set 0 in argument order
  /// (none for arguments that are not results).
  const KernelModule &getKernel() const { return kernel; }
  llvm::ArrayRef<std::vector<HostBuffer>> getInputSets() const {
    return inputSets;
  }
  llvm::ArrayRef<std::optional<HostBuffer>> getReferenceOutputs() const {
    return reference;
  }

private:
  CpuEvaluator() = default;
  /// Runs one candidate (or the reference, when `schedule` is null) in a
  /// child. With `referenceFile`, the child writes its outputs there instead
  /// of checking them.
  CandidateRecord runCandidate(const Schedule *schedule,
                               llvm::StringRef referenceFile,
                               std::optional<double> bestSeconds);
  /// Restores input set `set` into the working buffers: outputs poisoned,
  /// accumulators reset.
  void prepareRun(unsigned set);

  const TargetDescription *target = nullptr;
  EvaluatorOptions options;
  /// The reference's time limit, scaled to its work (see create()).
  double referenceTimeoutSeconds = 60;
  KernelModule kernel;
  /// Pristine input sets; working holds what the kernel runs on.
  std::vector<std::vector<HostBuffer>> inputSets;
  std::vector<HostBuffer> working;
  /// The reference's written buffers for input set 0, in argument order.
  std::vector<std::optional<HostBuffer>> reference;
  CandidateRecord referenceRecord;
};

} // namespace ke

#endif // KE_SEARCH_EVALUATOR_H

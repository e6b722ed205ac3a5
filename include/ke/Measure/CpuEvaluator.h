//===- CpuEvaluator.h - Build, check and time on this CPU -------*- C++ -*-===//
//
// The Evaluator of CPU targets. It holds everything needed to judge
// schedules on this machine's CPU: the kernel module, seeded input sets,
// and the reference outputs (the kernel lowered to plain loops without a
// schedule). Each candidate runs in a forked child in three steps
// (CpuEvaluator.cpp): build (apply the script, lower, JIT-compile), check
// (one run on input set 0 against the reference) and time (the measurement
// protocol, input sets rotated).
//
//===----------------------------------------------------------------------===//
#ifndef KE_MEASURE_CPUEVALUATOR_H
#define KE_MEASURE_CPUEVALUATOR_H

#include "ke/Measure/Evaluator.h"

namespace ke {

class CpuExecutable;

class CpuEvaluator final : public Evaluator {
public:
  /// Prepares `anchor` for evaluation on `target` (a CPU target for this
  /// host). Fails with a diagnostic at the anchor for unsupported workloads
  /// (dynamic shapes, unsupported element types) or when the reference
  /// cannot be built or run.
  /// Without `runReference` (the GpuEvaluator's device reference), only
  /// the kernel module and the input sets are made: getReferenceOutputs is
  /// empty and evaluate() must not be called.
  static mlir::FailureOr<std::unique_ptr<CpuEvaluator>>
  create(mlir::Operation *anchor, const TargetDescription &target,
         const EvaluatorOptions &options, bool runReference = true);

  /// Runs the reference (the unscheduled kernel as plain loops) in a child
  /// and keeps its outputs and record; create() calls it unless told not
  /// to. Fails with a diagnostic at `anchor` when the reference fails.
  mlir::LogicalResult runReference(mlir::Operation *anchor);
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
  /// In the child, the build step: `script` applied to a copy of the
  /// kernel, lowered with `threads` OpenMP threads (the reference: every
  /// core) and JIT-compiled; with `inF64`, its float arithmetic widened
  /// to f64 first (ke-widen-reference-floats: the reference's outputs).
  /// Null after writing the failure's report.
  std::unique_ptr<CpuExecutable> build(llvm::raw_ostream &report,
                                       llvm::StringRef script, unsigned threads,
                                       bool isReference,
                                       bool inF64 = false) const;
  /// In the child, one run on input set 0 (a warm-up, or the checked run);
  /// its seconds, std::nullopt after writing the failure's report.
  std::optional<double> runOnce(llvm::raw_ostream &report,
                                CpuExecutable &executable);
  /// In the child, the check step: one run on input set 0 (also the
  /// warm-up), its results checked against the reference (`worst`: the
  /// largest relative error), or with `referenceFile`, written there. The
  /// run's seconds; std::nullopt after writing the failure's report.
  std::optional<double> check(llvm::raw_ostream &report,
                              CpuExecutable &executable,
                              llvm::StringRef referenceFile, double &worst);
  /// In the child, the time step: the measurement protocol on the rotated
  /// input sets, or a single run (timing budget, early stop). Writes the
  /// report.
  void time(llvm::raw_ostream &report, CpuExecutable &executable,
            double checkSeconds, double worst,
            std::optional<double> bestSeconds);

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

#endif // KE_MEASURE_CPUEVALUATOR_H

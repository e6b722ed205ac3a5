//===- GpuEvaluator.h - Build, check and time on a GPU ----------*- C++ -*-===//
//
// The Evaluator of GPU targets (CUDA and ROCm). The reference is the CPU's:
// the unscheduled kernel lowered to loops and run on this machine's CPU once,
// on the same seeded inputs (a CpuEvaluator for the host does it, so both
// paths check against the same outputs with the same tolerances). Each
// candidate runs in a forked child that applies the schedule, lowers the
// kernel to a GpuKernelBinary, opens the device (CUDA and HIP live in
// children only), loads the binary, runs it once on input set 0, checks the
// results, and times it with the CudaRunner or the HipRunner (events, L2
// flushed, input sets rotated): tuning for rocm needs no code path beyond
// the runner. An illegal address, a hang or a crash becomes a launch-error,
// timeout or crash record, and tuning goes on.
//
//===----------------------------------------------------------------------===//
#ifndef KE_MEASURE_GPUEVALUATOR_H
#define KE_MEASURE_GPUEVALUATOR_H

#include "ke/Codegen/GpuKernel.h"
#include "ke/Measure/CpuEvaluator.h"

#include <functional>

namespace ke {

/// Lowers a kernel module whose schedule is applied (a transform script ran
/// on it) to device code and launches for `target`. Runs in the candidate's
/// child; a failure is the candidate's compile error.
using GpuKernelBuilder = std::function<llvm::Expected<GpuKernelBinary>(
    mlir::ModuleOp scheduledKernel, const TargetDescription &target)>;

/// ke's lowering for GPU targets, lowerKernelToGpuBinary
/// (ke/Codegen/GpuPipeline.h): for CUDA targets NVPTX (a cubin when ptxas is
/// there, else PTX for the driver to JIT), for ROCm targets ROCDL (an HSA
/// code object, ke/Codegen/RocdlPipeline.h).
GpuKernelBuilder getDefaultGpuKernelBuilder();

class GpuEvaluator final : public Evaluator {
public:
  /// Prepares `anchor` for evaluation on `target` (a CUDA or ROCm target;
  /// the device is EvaluatorOptions::deviceOrdinal): builds the kernel
  /// module and input sets and runs the reference on this machine's CPU.
  /// Fails with a diagnostic at the anchor like CpuEvaluator::create.
  static mlir::FailureOr<std::unique_ptr<GpuEvaluator>>
  create(mlir::Operation *anchor, const TargetDescription &target,
         const EvaluatorOptions &options,
         GpuKernelBuilder builder = getDefaultGpuKernelBuilder());

  mlir::Operation *getKernelAnchor() const override;
  CandidateRecord
  evaluate(const Schedule &schedule,
           std::optional<double> bestSeconds = std::nullopt) override;
  /// The reference's record: the unscheduled kernel on this machine's CPU.
  CandidateRecord evaluateReference() override;

private:
  GpuEvaluator() = default;

  TargetDescription target;
  /// The CPU the reference runs on (the reference evaluator points at it).
  TargetDescription host;
  EvaluatorOptions options;
  GpuKernelBuilder builder;
  std::unique_ptr<CpuEvaluator> reference;
};

} // namespace ke

#endif // KE_MEASURE_GPUEVALUATOR_H

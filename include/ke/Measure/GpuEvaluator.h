//===- GpuEvaluator.h - Build, check and time on a GPU ----------*- C++ -*-===//
//
// The Evaluator of GPU targets (CUDA and ROCm). The reference is the
// unscheduled kernel as plain loops, run once on the same seeded inputs as
// the CPU path's (a CpuEvaluator for the host makes them): on this machine's
// CPU, or for big workloads on the device (ke/Codegen/GpuReference.h,
// EvaluatorOptions::reference), both with the same tolerances. Each
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
#include "ke/Runtime/ServingChild.h"

#include <functional>

namespace ke {

/// Workloads whose reference runs on the device under ReferencePlace::Auto:
/// more buffer bytes or more flops than these (plain loops on a CPU take
/// about a minute for 10 GFLOP even on 16 cores).
inline constexpr uint64_t kBigReferenceBytes = 1ull << 30;
inline constexpr uint64_t kBigReferenceFlops = 10'000'000'000ull;

/// Whether `anchor`'s kernel (with buffers `arguments`) is big enough for
/// ReferencePlace::Auto to run its reference on the device.
bool isBigReference(mlir::Operation *anchor,
                    llvm::ArrayRef<KernelArgument> arguments);

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
  /// module and input sets and runs the reference where
  /// EvaluatorOptions::reference says. Fails with a diagnostic at the anchor
  /// like CpuEvaluator::create, or when the device reference it was told to
  /// use fails (under Auto, the CPU's runs instead, said on stderr).
  static mlir::FailureOr<std::unique_ptr<GpuEvaluator>>
  create(mlir::Operation *anchor, const TargetDescription &target,
         const EvaluatorOptions &options,
         GpuKernelBuilder builder = getDefaultGpuKernelBuilder());

  mlir::Operation *getKernelAnchor() const override;
  /// One candidate: evaluateBatch of one.
  CandidateRecord
  evaluate(const Schedule &schedule,
           std::optional<double> bestSeconds = std::nullopt) override;
  /// Builds up to EvaluatorOptions::jobs candidates at once, each in a child
  /// (script applied, lowered, the binary written to a file), ahead of the
  /// one being measured; measures them one at a time, in order, each in a
  /// child of its own (the binary loaded, checked, timed).
  void evaluateBatch(llvm::ArrayRef<Schedule> schedules, BestFn bestSeconds,
                     RecordFn onRecord) override;
  /// The reference's record: the unscheduled kernel on this machine's CPU
  /// or, as plain-loop launches, on the device.
  CandidateRecord evaluateReference() override;

  ~GpuEvaluator() override;

  /// Stops every measuring server of this process (they run again when
  /// next needed). A process about to fork a child that will measure with
  /// its evaluators (an MPI run's rank 0, ke/Distributed) calls this first:
  /// a server is a child of this process, which the new one could not
  /// share.
  static void stopMeasuringServers();

private:
  GpuEvaluator() = default;
  /// Measures the binary built at `path` (load, check, time): by the
  /// measuring server, or in a child of its own without
  /// EvaluatorOptions::measuringServer.
  ChildResult measureBuilt(llvm::StringRef path, std::optional<double> best);
  /// In the measuring server: one request ({"path", "best"}), its report;
  /// false when the server must end (its device may be unusable).
  bool serveMeasurement(llvm::StringRef request, llvm::raw_ostream &report);
  /// Runs the device reference in a child and keeps its outputs and record;
  /// on failure, `why` says why.
  mlir::LogicalResult runDeviceReference(mlir::Operation *anchor,
                                         std::string &why);

  TargetDescription target;
  /// The CPU the reference runs on (the reference evaluator points at it).
  TargetDescription host;
  EvaluatorOptions options;
  GpuKernelBuilder builder;
  /// The kernel module and input sets, and the CPU reference when it runs.
  std::unique_ptr<CpuEvaluator> cpu;
  /// The reference's outputs (the CPU evaluator's or ownedReferenceOutputs)
  /// and record.
  llvm::ArrayRef<std::optional<HostBuffer>> referenceOutputs;
  std::vector<std::optional<HostBuffer>> ownedReferenceOutputs;
  CandidateRecord referenceRecord;
  /// The measuring server: forked when a batch begins (it opens the
  /// device while the batch's candidates build) and kept between batches
  /// while it is among the process's recently used servers.
  std::unique_ptr<ServingChild> server;
  /// The measuring server, started now unless it runs (when the options
  /// ask for one), and marked the most recently used.
  ServingChild *getMeasuringServer();
  /// The servers of this process that may hold a device context at once.
  static ServingChildPool &getServerPool();
};

} // namespace ke

#endif // KE_MEASURE_GPUEVALUATOR_H

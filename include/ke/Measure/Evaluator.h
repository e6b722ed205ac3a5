//===- Evaluator.h - Build, check and time one candidate --------*- C++ -*-===//
//
// The measure interface: what Search and the driver see of measurement. An
// Evaluator judges schedules for one workload on one target. Each
// evaluation builds the candidate (applies the schedule, lowers it, loads
// it), checks it against the reference (the kernel lowered without a
// schedule, run on the same inputs) and times it by the measurement
// protocol (docs/measurement.md), in a forked child: a crash, a hang or any
// failure becomes a classified record. The evaluators are CpuEvaluator.h
// (this machine's CPU) and GpuEvaluator.h (CUDA and ROCm).
//
//===----------------------------------------------------------------------===//
#ifndef KE_MEASURE_EVALUATOR_H
#define KE_MEASURE_EVALUATOR_H

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
  /// The transform script the candidate was built with (empty for the
  /// reference), written once per candidate: records store this text.
  std::string script;
  ErrorClass error = ErrorClass::None;
  std::string message;
  Measurement measurement;
  /// Relative L2 error against the reference (for valid candidates).
  double relativeError = 0;
  /// True when timing stopped after the checked run (see EvaluatorOptions).
  bool earlyStop = false;
  /// In an MPI run, the rank, node and device that measured it (docs/
  /// tuning.md, Tuning on a cluster); empty in a run of one process.
  std::string measuredBy;

  bool isValid() const { return error == ErrorClass::None; }
  llvm::json::Value toJSON() const;
};

/// Where a GPU target's reference runs (a CPU target's always runs on the
/// CPU). docs/measurement.md.
enum class ReferencePlace {
  /// The device for big workloads (isBigReference), this machine's CPU for
  /// the rest, and the CPU again when the device reference fails.
  Auto,
  /// This machine's CPU: plain loops, independent of ke's GPU lowering.
  Cpu,
  /// The device: the same plain loops, one thread per output point
  /// (ke/Codegen/GpuReference.h).
  Device,
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
  /// The GPU that CUDA and ROCm targets run on.
  int deviceOrdinal = 0;
  /// The kernel group measured. Callers pass getKernelFusion(target)
  /// (ke/TunedSchedules/TunedSchedules.h): what is measured must be the
  /// group that compile applies the schedule to. (A GPU evaluator's CPU
  /// reference runs the same group.)
  KernelFusion fusion = KernelFusion::Elementwise;
  /// Where a GPU target's reference runs.
  ReferencePlace reference = ReferencePlace::Auto;
  /// f32 results carry TF32's error (getTF32Tolerance): set by the GPU
  /// evaluator for an f32 contraction on a target that allows TF32.
  bool tf32Results = false;
  /// Candidates a GPU evaluator builds at once, in children of their own,
  /// ahead of the one being measured (docs/tuning.md, Parallel builds); 0
  /// picks the default, getDefaultBuildJobs. A CPU evaluator builds each
  /// candidate in its measuring child: the measurement needs the cores.
  unsigned jobs = 0;
  /// GPU targets: candidates are measured by one long-lived child that
  /// keeps the device context and uploaded input sets (docs/tuning.md,
  /// Parallel builds); a crash, hang or device fault ends it and the next
  /// candidate starts another. False: a new child per candidate.
  bool measuringServer = true;
  /// Measuring servers (of this process's GPU evaluators, one per workload)
  /// kept running at once; the least recently used beyond it is stopped.
  /// Each holds a device context and its workload's input sets on the
  /// device, so a tuner moving between a few workloads does not pay the
  /// driver, the context and the uploads every round.
  unsigned liveMeasuringServers = 4;
};

/// The builds a GPU evaluator runs at once by default: the host's cores but
/// the one the measuring child needs (at least 1).
unsigned getDefaultBuildJobs();

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
  /// Evaluates `schedules` as evaluate() would one after another: their
  /// records go to `onRecord(index, record)` in order, each as soon as it
  /// is known, and `bestSeconds()` is asked for each just before it is
  /// measured (so it holds the earlier ones of the batch). The default
  /// calls evaluate(); the GPU evaluator builds ahead in parallel.
  using RecordFn = llvm::function_ref<void(unsigned, CandidateRecord)>;
  using BestFn = llvm::function_ref<std::optional<double>()>;
  virtual void evaluateBatch(llvm::ArrayRef<Schedule> schedules,
                             BestFn bestSeconds, RecordFn onRecord);
  /// The reference (unscheduled) kernel's record.
  virtual CandidateRecord evaluateReference() = 0;
};

/// The evaluator of `target`'s family: a CpuEvaluator for this machine's
/// CPU, a GpuEvaluator for CUDA and ROCm targets. Fails
/// with a diagnostic at `anchor` like their create().
mlir::FailureOr<std::unique_ptr<Evaluator>>
createEvaluator(mlir::Operation *anchor, const TargetDescription &target,
                const EvaluatorOptions &options);

} // namespace ke

#endif // KE_MEASURE_EVALUATOR_H

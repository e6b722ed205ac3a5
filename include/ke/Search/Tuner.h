//===- Tuner.h - Tuning workloads: explore, then droplet --------*- C++ -*-===//
//
// The search loop (docs/tuning.md) for the workloads of one run: per workload an
// Evaluator (CPU or GPU, by the target) and a SearchTask, earlier records
// from the database (they count as measured and against the trial budget,
// so a run resumes), the untuned default, then rounds given out by the
// TaskScheduler: evolutionary exploration until `explore` candidates are
// measured, droplet search after.
// Every candidate goes to the database (one transaction each), the JSONL
// records file and the CSV log as soon as it is measured.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_TUNER_H
#define KE_SEARCH_TUNER_H

#include "ke/Search/ConcurrentRounds.h"
#include "ke/Search/Droplet.h"
#include "ke/Search/Explorer.h"
#include "ke/Search/FinalCheck.h"
#include "ke/Search/Proposer.h"
#include "ke/Search/TaskScheduler.h"
#include "ke/Workload/Workload.h"

#include <array>
#include <functional>

namespace ke {

class TuningDatabase;

enum class SearchStrategy {
  /// Evolutionary exploration, then droplet search (the default).
  ExploreThenDroplet,
  /// Uniformly random candidates (the baseline of benchmarks).
  Random
};

/// Makes the evaluator of workload `workloadIndex` (its index in the
/// workloads tuneWorkloads was given) for `anchor` on `target`:
/// createEvaluator by default, the distributed evaluator of an MPI run
/// (ke/Distributed/DistributedTuning.h) there.
using EvaluatorFactory = std::function<mlir::FailureOr<std::unique_ptr<Evaluator>>(
    unsigned workloadIndex, mlir::Operation *anchor,
    const TargetDescription &target, const EvaluatorOptions &options)>;

struct TuneOptions {
  /// Trials per workload on average; the task scheduler splits
  /// `trials * workloads` among them. Records of earlier runs count.
  unsigned trials = 400;
  /// Candidates explored per workload before droplet search takes over.
  unsigned explore = 300;
  SearchStrategy strategy = SearchStrategy::ExploreThenDroplet;
  uint64_t seed = 0;
  EvaluatorOptions evaluator;
  ExplorerOptions explorer;
  DropletOptions droplet;
  TaskSchedulerOptions scheduler;
  /// Every candidate is appended here as one JSON line, when set.
  llvm::raw_ostream *records = nullptr;
  /// The convergence curve as CSV, when set (docs/tuning.md).
  llvm::raw_ostream *log = nullptr;
  /// Records are read from and written to it, when set.
  TuningDatabase *database = nullptr;
  /// Live progress on stderr.
  bool showProgress = true;
  /// End a workload's search when droplet search converges, even with
  /// budget left. By default the rest of the budget goes to new rounds of
  /// exploration, each followed by droplet search from what it found.
  bool stopWhenConverged = false;
  /// After the search, its fastest candidates and the untuned default are
  /// re-timed side by side and the winner is stored as the workload's
  /// "final" record (ke/Search/FinalCheck.h); finalists = 0 turns it off.
  FinalCheckOptions finalCheck;
  /// Proposals from outside the search (off unless a command or URL is
  /// set): an extra mutation operator in every exploration round.
  ProposerOptions proposer;
  /// The cost model of each workload starts from up to this many trials of
  /// other workloads on the target in the database (their stored features,
  /// newest first; docs/cost-model.md, Transfer). 0: it starts empty.
  unsigned transferSamples = 2000;
  /// Where evaluators come from; null: createEvaluator.
  EvaluatorFactory createEvaluator;
  /// When set (an MPI run's rank 0, whose evaluators measure on several
  /// devices), rounds of different workloads run at once
  /// (ke/Search/ConcurrentRounds.h); null: one round after another.
  ConcurrentRounds *concurrent = nullptr;
  /// Set, when not null, to the wall time of the search of all workloads
  /// (concurrent rounds overlap, so their workloads' searchSeconds do not
  /// add up to it).
  double *searchWallSeconds = nullptr;
};

/// What tuning one workload produced.
struct TuningResult {
  std::string key;
  std::string opName;
  std::optional<uint64_t> flops;
  unsigned count = 0;
  /// Why the workload was not tuned (empty when it was).
  std::string skipped;
  /// The key of the workload whose kernel holds this one (a fill of its
  /// init, its fused elementwise consumer): tuned as part of that kernel.
  std::string fusedInto;
  /// `best` is the final check's winner (its median round) when the check
  /// ran, else the search's fastest record.
  std::optional<CandidateRecord> reference, untuned, best;
  /// The search's finalists re-timed side by side, when there were two or
  /// more to compare.
  std::optional<FinalCheck> finalCheck;
  /// Measured in this run (trials), of them valid; by phase.
  unsigned trials = 0, valid = 0, explored = 0, droplet = 0, proposed = 0;
  /// What the proposer did for this workload, when one was set.
  std::optional<ProposerStats> proposer;
  /// Records of earlier runs taken from the database.
  unsigned previous = 0;
  /// Other workloads' trials (and how many workloads) the cost model was
  /// warm-started with.
  unsigned transferSamples = 0, transferWorkloads = 0;
  unsigned dropletMoves = 0;
  /// Rounds of exploration after droplet search converged with budget left.
  unsigned restarts = 0;
  /// Wall time of this run's search of the workload (its trials: building,
  /// checking and timing candidates, the cost model), without the reference
  /// and the untuned default.
  double searchSeconds = 0;
  std::array<unsigned, kNumErrorClasses> errors{};
  /// Why the search of this workload ended ("budget", "converged",
  /// "exhausted").
  std::string stopped;

  llvm::json::Value toJSON() const;
};

/// Tunes `workloads` on `target`: this CPU, or a CUDA device (the caller
/// checks that one is there: probeCudaDevice).
std::vector<TuningResult> tuneWorkloads(llvm::ArrayRef<Workload> workloads,
                                        const TargetDescription &target,
                                        const TuneOptions &options);

/// The operation tuneWorkloads measures for `workload`: its first
/// occurrence that anchors a kernel group of its own on `target`, or null
/// when every occurrence is fused into another anchor's kernel.
mlir::Operation *getTuningAnchor(const Workload &workload,
                                 const TargetDescription &target);

/// The evaluator options tuneWorkloads gives `workload`, one of
/// `numWorkloads`: `options.evaluator` with the workload's seed, the
/// target's kernel fusion and a share of the input-set budget.
EvaluatorOptions getTuningEvaluatorOptions(const Workload &workload,
                                           const TargetDescription &target,
                                           const TuneOptions &options,
                                           unsigned numWorkloads);

/// The seed of workload `key`'s search: tuning one workload alone or among
/// others draws the same candidates.
uint64_t getWorkloadSeed(llvm::StringRef key, uint64_t seed);

} // namespace ke

#endif // KE_SEARCH_TUNER_H

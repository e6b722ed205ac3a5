//===- SearchTask.h - The search state of one workload ----------*- C++ -*-===//
//
// What every search strategy shares for one workload: its sketches, the
// candidates measured so far (never one twice), the best, and the budget
// bookkeeping. Measuring goes through a MeasureFn: the CpuEvaluator when
// tuning, a synthetic function in tests (so searches are testable without
// timing noise).
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_SEARCHTASK_H
#define KE_SEARCH_SEARCHTASK_H

#include "ke/Measure/Evaluator.h"

#include "llvm/ADT/StringMap.h"

#include <functional>
#include <random>

namespace ke {

/// Builds, runs, checks and times one candidate. `bestSeconds` is the best
/// time so far (for early stops).
using MeasureFn = std::function<CandidateRecord(
    const Schedule &schedule, std::optional<double> bestSeconds)>;

/// Builds, runs, checks and times several candidates, as MeasureFn would
/// one after another: records go to `onRecord(index, record)` in order, and
/// `bestSeconds()` gives the best so far just before each is measured
/// (Evaluator::evaluateBatch).
using BatchMeasureFn = std::function<void(
    llvm::ArrayRef<Schedule> schedules,
    llvm::function_ref<std::optional<double>()> bestSeconds,
    llvm::function_ref<void(unsigned, CandidateRecord)> onRecord)>;

/// Where a candidate came from.
enum class SearchPhase {
  Previous,
  Untuned,
  Random,
  Explore,
  Droplet,
  /// Proposed from outside the search (ke/Search/Proposer.h).
  Proposed
};
llvm::StringRef stringifySearchPhase(SearchPhase phase);

struct MeasuredCandidate {
  Schedule schedule;
  CandidateRecord record;
  SearchPhase phase;
};

/// "sketch:i,j,k": identifies a schedule within one workload.
std::string getScheduleId(const Schedule &schedule);

class SearchTask {
public:
  SearchTask(mlir::Operation *anchor, const TargetDescription &target,
             llvm::SmallVector<Schedule> sketches, MeasureFn measure,
             uint64_t seed);

  mlir::Operation *getAnchor() const { return anchor; }
  const TargetDescription &getTarget() const { return *target; }
  llvm::ArrayRef<Schedule> getSketches() const { return sketches; }
  std::mt19937_64 &getRng() { return rng; }

  /// True when `schedule` passes its rule's limits for this workload.
  bool withinLimits(const Schedule &schedule) const;
  bool isMeasured(const Schedule &schedule) const {
    return measuredIds.contains(getScheduleId(schedule));
  }
  /// A uniformly random schedule within the limits (see Sampler).
  std::optional<Schedule> sampleRandom();

  /// Takes a record measured outside this task: in an earlier run (phase
  /// Previous, from the database; counted by getNumPrevious) or by the tuner
  /// itself (the untuned default). It counts as measured and as history,
  /// but not as measured by this task.
  void addRecord(const Schedule &schedule, CandidateRecord record,
                 SearchPhase phase = SearchPhase::Previous);
  /// Measures `schedule` unless it was measured before; returns its entry.
  const MeasuredCandidate &measure(const Schedule &schedule,
                                   SearchPhase phase);
  /// Measures those of `schedules` not measured before (each once), through
  /// the batch function when one is set (a GPU evaluator builds them in
  /// parallel), else one by one. Returns how many were measured.
  unsigned measureBatch(llvm::ArrayRef<Schedule> schedules, SearchPhase phase);
  /// Measures batches with `batch` from now on.
  void setBatchMeasure(BatchMeasureFn batch) {
    batchMeasureFn = std::move(batch);
  }

  /// The entry of `schedule` when it was measured, else null.
  const MeasuredCandidate *find(const Schedule &schedule) const;
  llvm::ArrayRef<MeasuredCandidate> getHistory() const { return history; }
  const MeasuredCandidate *getBest() const {
    return bestIndex ? &history[*bestIndex] : nullptr;
  }
  std::optional<double> getBestSeconds() const;
  /// Candidates measured in this run / in earlier runs.
  unsigned getNumMeasured() const { return numMeasured; }
  unsigned getNumPrevious() const { return numPrevious; }
  /// Measured in this run or earlier in `phase`.
  unsigned countPhase(SearchPhase phase) const;

  /// Called after every candidate measured in this run.
  std::function<void(const MeasuredCandidate &)> onMeasured;

private:
  void append(MeasuredCandidate candidate);
  /// Appends a candidate measured in this run and tells onMeasured.
  const MeasuredCandidate &appendMeasured(MeasuredCandidate candidate);

  mlir::Operation *anchor;
  const TargetDescription *target;
  llvm::SmallVector<Schedule> sketches;
  MeasureFn measureFn;
  BatchMeasureFn batchMeasureFn;
  std::mt19937_64 rng;
  Sampler sampler;
  std::vector<MeasuredCandidate> history;
  llvm::StringMap<size_t> measuredIds;
  std::optional<size_t> bestIndex;
  unsigned numMeasured = 0, numPrevious = 0;
};

} // namespace ke

#endif // KE_SEARCH_SEARCHTASK_H

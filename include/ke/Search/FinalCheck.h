//===- FinalCheck.h - The search's finalists re-timed side by side -*- C++ -*-===//
//
// A search keeps the candidate with the lowest measured median, and over
// hundreds of trials the lowest median is partly luck: a candidate timed in
// a quiet moment beats an equal or faster one timed while something else
// ran. Issue #16/#17's case: after 1000 trials of sgemm the kept record
// re-timed 3% slower than the untuned default it had "beaten".
//
// So after the search, its fastest few candidates and the untuned default
// are built and timed again in alternating rounds (each once per round, so a
// disturbance hits them alike), and the one with the lowest median of its
// round medians becomes the workload's schedule: the tuner stores it as the
// record of role "final", which TuningDatabase::getBest prefers to any
// trial measured before it. A finalist that fails in any round (a crash, a
// wrong result: a flaky candidate) is out. docs/tuning.md, Final check.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_FINALCHECK_H
#define KE_SEARCH_FINALCHECK_H

#include "ke/Search/SearchTask.h"

namespace ke {

struct FinalCheckOptions {
  /// Candidates re-timed besides the untuned default: the fastest distinct
  /// valid ones. 0 turns the check off.
  unsigned finalists = 3;
  /// Alternating rounds; each finalist is timed once in each.
  unsigned rounds = 3;
  /// Only candidates whose recorded median is within this factor of the
  /// best one's are re-timed, and the untuned default however it was
  /// recorded. Round-to-round noise on the project's machines is a few
  /// percent; re-timing a candidate recorded far slower costs as much as
  /// any other and rarely changes the outcome.
  double margin = 1.10;
};

/// One finalist and its re-timings.
struct Finalist {
  Schedule schedule;
  /// The record the search kept for it.
  CandidateRecord recorded;
  /// True for the untuned default (the sketch's default schedule).
  bool untuned = false;
  /// Its records, one per round it was timed in: all rounds, or up to the
  /// first that failed.
  std::vector<CandidateRecord> rounds;

  /// True when every round ran and was valid.
  bool isQualified(unsigned numRounds) const;
  /// The round whose median is the median of the round medians (the lower
  /// middle one for an even count): a real measurement, which stands for
  /// the finalist. Only for a qualified finalist.
  const CandidateRecord &getMedianRound() const;
};

/// The outcome of a final check.
struct FinalCheck {
  unsigned rounds = 0;
  /// The search's best first, then by recorded median; the untuned default
  /// last unless it was among the fastest.
  std::vector<Finalist> finalists;
  /// The qualified finalist with the lowest median round, if any.
  std::optional<unsigned> winner;

  /// True when the winner is not the search's best.
  bool changedBest() const { return winner && *winner != 0; }
  /// The untuned default's finalist, when it was one.
  const Finalist *getUntuned() const;
  llvm::json::Value toJSON() const;
};

/// Re-times the finalists of `task` (its fastest valid candidates within
/// the margin, and `untuned` when it was measured and valid) in
/// `options.rounds` alternating rounds through `measure`, with no early
/// stop; `onRecord` gets every re-timing as it is measured. None when there
/// is nothing to compare: the check is off, or fewer than two candidates
/// qualify as finalists.
std::optional<FinalCheck>
runFinalCheck(const SearchTask &task, const Schedule &untuned,
              const BatchMeasureFn &measure, const FinalCheckOptions &options,
              llvm::function_ref<void(const Finalist &, const CandidateRecord &)>
                  onRecord);

} // namespace ke

#endif // KE_SEARCH_FINALCHECK_H

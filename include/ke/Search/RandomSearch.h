//===- RandomSearch.h - Tuning by random sampling ---------------*- C++ -*-===//
//
// The first search: the default schedule, then `trials` random schedules
// drawn within the target's limits, each built, checked and timed by a
// CpuEvaluator. Issue #4 replaces it with evolutionary exploration and
// droplet search; the result and progress reporting stay.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_RANDOMSEARCH_H
#define KE_SEARCH_RANDOMSEARCH_H

#include "ke/Search/Evaluator.h"
#include "ke/Workload/Workload.h"

#include <array>

namespace ke {

struct TuneOptions {
  unsigned trials = 200;
  uint64_t seed = 0;
  EvaluatorOptions evaluator;
  /// Every candidate is appended here as one JSON line, when set.
  llvm::raw_ostream *records = nullptr;
  /// Live progress on stderr.
  bool showProgress = true;
};

/// What tuning one workload produced.
struct TuningResult {
  std::string key;
  std::string opName;
  std::optional<uint64_t> flops;
  unsigned count = 0;
  /// Why the workload was not tuned (empty when it was).
  std::string skipped;
  std::optional<CandidateRecord> reference, untuned, best;
  unsigned trials = 0, valid = 0;
  std::array<unsigned, kNumErrorClasses> errors{};
  uint64_t rejectedByLimits = 0;

  llvm::json::Value toJSON() const;
};

/// Tunes one workload on this CPU. `index` and `total` are for progress.
TuningResult tuneWithRandomSearch(const Workload &workload,
                                  const TargetDescription &target,
                                  const TuneOptions &options, unsigned index,
                                  unsigned total);

} // namespace ke

#endif // KE_SEARCH_RANDOMSEARCH_H

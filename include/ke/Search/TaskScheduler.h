//===- TaskScheduler.h - Splitting trials across workloads ------*- C++ -*-===//
//
// Ansor's gradient-based task scheduler: the objective is the weighted sum
// of the workloads' best times (weight = how often the workload occurs); the
// next round goes to the workload whose best time is expected to fall
// fastest, estimated from its recent progress (backward gradient) and an
// optimistic guess of what more trials can give (forward gradient). Every
// workload gets one round first; an eps-greedy share of rounds is random.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_TASKSCHEDULER_H
#define KE_SEARCH_TASKSCHEDULER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <random>
#include <vector>

namespace ke {

struct TaskSchedulerOptions {
  /// Weight of the backward gradient against the forward one (Ansor: 0.2).
  double alpha = 0.2;
  /// Rounds over which the backward gradient is measured (Ansor: 3).
  unsigned window = 3;
  /// Share of rounds given to a random unfinished task.
  double epsGreedy = 0.05;
};

class TaskScheduler {
public:
  TaskScheduler(std::vector<double> weights, uint64_t seed,
                TaskSchedulerOptions options = {});

  /// The task for the next round among those not marked finished, or none
  /// when all are. With `busy`, tasks it holds true for (a round of theirs
  /// is in flight: ke/Search/ConcurrentRounds.h) are passed over as well.
  std::optional<unsigned>
  pick(llvm::function_ref<bool(unsigned)> busy = nullptr);
  /// Reports a round of `task`: its best time afterwards (none while it has
  /// no valid candidate).
  void update(unsigned task, std::optional<double> bestSeconds);
  void markFinished(unsigned task) { finished[task] = true; }
  bool isFinished(unsigned task) const { return finished[task]; }
  /// Rounds given to `task` so far.
  unsigned getRounds(unsigned task) const { return history[task].size(); }
  /// The gradient used to rank `task` (more negative: more promising).
  double getGradient(unsigned task) const;

private:
  std::vector<double> weights;
  /// Best time after each round of each task (infinity before a valid one).
  std::vector<std::vector<double>> history;
  std::vector<bool> finished;
  std::mt19937_64 rng;
  TaskSchedulerOptions options;
};

} // namespace ke

#endif // KE_SEARCH_TASKSCHEDULER_H

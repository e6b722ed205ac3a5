//===- Explorer.h - Evolutionary exploration with a cost model --*- C++ -*-===//
//
// Ansor's evolutionary search (docs/tuning.md, One workload): each round
// evolves a population of schedules for a few generations, ranked by a cost
// model trained on every candidate measured so far, and measures the best
// predicted unmeasured ones plus a few random picks (eps-greedy). Besides
// mutation it uses crossover (a child takes each knob from one of two
// parents of the same sketch), which upstream Ansor never shipped.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_EXPLORER_H
#define KE_SEARCH_EXPLORER_H

#include "ke/Search/CostModel.h"
#include "ke/Search/SearchTask.h"

namespace ke {

/// Ansor's defaults.
struct ExplorerOptions {
  unsigned populationSize = 2048;
  unsigned generations = 4;
  /// A child is a mutation of one parent with this probability, otherwise a
  /// crossover of two.
  double mutationProbability = 0.85;
  /// Share of each measured batch drawn at random instead of by the model.
  double epsGreedy = 0.05;
  /// Candidates measured per round.
  unsigned batchSize = 64;
  /// Share of the initial population taken from the best measured.
  double measuredShare = 0.2;
};

class Explorer {
public:
  /// `model` may be null: candidates are then ranked at random (the search
  /// degrades to evolution without guidance, reported by the caller).
  Explorer(SearchTask &task, std::unique_ptr<CostModel> model,
           ExplorerOptions options = {});

  /// Measures one round: up to min(batch, maxTrials) new candidates.
  /// Returns how many were measured; 0 means the space is exhausted.
  unsigned runRound(unsigned maxTrials);

  /// The next `count` distinct unmeasured candidates (model-ranked, plus
  /// eps-greedy random ones). Retrains the model first when new
  /// measurements arrived.
  std::vector<Schedule> propose(unsigned count);

private:
  const std::vector<float> &featuresOf(const Schedule &schedule);
  std::vector<float> predict(llvm::ArrayRef<Schedule> schedules);
  void retrain();
  std::optional<Schedule> mutate(const Schedule &parent);
  std::optional<Schedule> crossover(const Schedule &a, const Schedule &b);
  std::vector<Schedule> evolve();

  SearchTask &task;
  std::unique_ptr<CostModel> model;
  ExplorerOptions options;
  llvm::StringMap<std::vector<float>> featureCache;
  /// History entries the model was last trained on.
  size_t trainedOn = 0;
};

} // namespace ke

#endif // KE_SEARCH_EXPLORER_H

//===- ExploreThenDroplet.h - One workload's search policy ------*- C++ -*-===//
//
// The default search of one workload (docs/tuning.md, One workload), after
// the untuned default: evolutionary exploration guided by the cost model
// until `explore` candidates are measured, then droplet search from the best.
// When droplet search converges with budget left, the budget is spent, not
// abandoned: a new round of exploration (candidates not measured yet), then
// droplet search again from the best so far (a restart), unless the caller
// asked to stop at convergence. An optional proposer (ke/Search/Proposer.h)
// adds its proposals to each round of exploration. The tuner hands out the
// rounds; this class
// only decides what each round measures, so it is testable on a synthetic
// SearchTask.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_EXPLORETHENDROPLET_H
#define KE_SEARCH_EXPLORETHENDROPLET_H

#include "ke/Search/CostModel.h"
#include "ke/Search/Droplet.h"
#include "ke/Search/Explorer.h"
#include "ke/Search/Proposer.h"

#include <memory>

namespace ke {

struct ExploreThenDropletOptions {
  /// Candidates explored before droplet search takes over; records already
  /// in the task (earlier runs) count.
  unsigned explore = 300;
  ExplorerOptions explorer;
  DropletOptions droplet;
  /// End the search when droplet search converges, even with budget left.
  bool stopWhenConverged = false;
  /// The extra mutation operator, when set: each exploration round first
  /// measures up to `proposalsPerRound` of its proposals (counted in
  /// `proposerStats`, which must then be set too).
  Proposer *proposer = nullptr;
  unsigned proposalsPerRound = 8;
  ProposerStats *proposerStats = nullptr;
};

class ExploreThenDroplet {
public:
  ExploreThenDroplet(SearchTask &task, std::unique_ptr<CostModel> model,
                     ExploreThenDropletOptions options);

  /// One round, at most `maxTrials` candidates. Returns how many were
  /// measured; 0 ends the search (getStopReason says why).
  unsigned runRound(unsigned maxTrials);

  /// Rounds of exploration after droplet search converged with budget left.
  unsigned getNumRestarts() const { return restarts; }
  /// Droplet moves over all restarts.
  unsigned getNumDropletMoves() const {
    return movesBefore + droplet->getNumMoves();
  }
  /// Why runRound returned 0: "converged" (droplet search found nothing
  /// better and no restart was made) or "exhausted" (no candidate left).
  /// Empty while the search goes on.
  llvm::StringRef getStopReason() const { return stopReason; }

private:
  /// One round of exploration, at most `maxTrials`: the proposer's
  /// proposals first, then the explorer's candidates.
  unsigned explore(unsigned maxTrials);

  SearchTask &task;
  ExploreThenDropletOptions options;
  Explorer explorer;
  std::unique_ptr<DropletSearch> droplet;
  unsigned exploreLeft;
  unsigned restarts = 0, movesBefore = 0;
  std::string stopReason;
};

} // namespace ke

#endif // KE_SEARCH_EXPLORETHENDROPLET_H

//===- ExploreThenDroplet.cpp - One workload's search policy --------------===//

#include "ke/Search/ExploreThenDroplet.h"

using namespace ke;

ExploreThenDroplet::ExploreThenDroplet(SearchTask &task,
                                       std::unique_ptr<CostModel> model,
                                       ExploreThenDropletOptions options)
    : task(task), options(options),
      explorer(task, std::move(model), options.explorer),
      droplet(std::make_unique<DropletSearch>(task, options.droplet)) {
  unsigned explored = task.getNumPrevious();
  exploreLeft = options.explore > explored ? options.explore - explored : 0;
}

unsigned ExploreThenDroplet::explore(unsigned maxTrials) {
  unsigned measured = 0;
  if (options.proposer && maxTrials > 0) {
    std::vector<Schedule> proposals =
        askForProposals(*options.proposer, task,
                        std::min(options.proposalsPerRound, maxTrials),
                        *options.proposerStats);
    measured = task.measureBatch(proposals, SearchPhase::Proposed);
  }
  if (measured < maxTrials)
    measured += explorer.runRound(maxTrials - measured);
  return measured;
}

unsigned ExploreThenDroplet::runRound(unsigned maxTrials) {
  if (exploreLeft > 0) {
    unsigned measured = explore(
        std::min({exploreLeft, options.explorer.batchSize, maxTrials}));
    exploreLeft = measured ? exploreLeft - measured : 0;
    if (measured)
      return measured;
  }
  if (unsigned measured = droplet->runRound(maxTrials))
    return measured;
  // Converged with budget left: a new round of exploration (the evolution
  // and the cost model propose candidates not measured yet), then droplet
  // search again from the best so far, which may be one of them.
  if (droplet->isFinished() && !options.stopWhenConverged) {
    unsigned explored =
        explore(std::min(options.explorer.batchSize, maxTrials));
    if (explored) {
      movesBefore += droplet->getNumMoves();
      droplet = std::make_unique<DropletSearch>(task, options.droplet);
      ++restarts;
      return explored;
    }
  }
  stopReason = droplet->isFinished() ? "converged" : "exhausted";
  return 0;
}

//===- TaskScheduler.cpp - Splitting trials across workloads --------------===//

#include "ke/Search/TaskScheduler.h"

#include <cmath>
#include <limits>

using namespace ke;

TaskScheduler::TaskScheduler(std::vector<double> weights, uint64_t seed,
                             TaskSchedulerOptions options)
    : weights(std::move(weights)), history(this->weights.size()),
      finished(this->weights.size(), false), rng(seed), options(options) {}

void TaskScheduler::update(unsigned task, std::optional<double> bestSeconds) {
  history[task].push_back(
      bestSeconds ? *bestSeconds : std::numeric_limits<double>::infinity());
}

double TaskScheduler::getGradient(unsigned task) const {
  const std::vector<double> &h = history[task];
  if (h.empty() || !std::isfinite(h.back()))
    return -std::numeric_limits<double>::infinity(); // nothing valid yet
  double best = h.back();
  double rounds = double(h.size());
  // Backward: the change of the best over the last `window` rounds.
  double backward = 0;
  if (h.size() > options.window && std::isfinite(h[h.size() - 1 - options.window]))
    backward = (best - h[h.size() - 1 - options.window]) / options.window;
  // Forward (Ansor, without the similar-task term): if the best kept falling
  // at its average rate, it would lose best/rounds per round.
  double forward = -best / rounds;
  return weights[task] *
         (options.alpha * backward + (1 - options.alpha) * forward);
}

std::optional<unsigned>
TaskScheduler::pick(llvm::function_ref<bool(unsigned)> busy) {
  std::vector<unsigned> open;
  for (unsigned t = 0; t < finished.size(); ++t)
    if (!finished[t] && !(busy && busy(t)))
      open.push_back(t);
  if (open.empty())
    return std::nullopt;
  // Warm-up: every task gets a round before gradients mean anything.
  for (unsigned t : open)
    if (history[t].empty())
      return t;
  if (std::bernoulli_distribution(options.epsGreedy)(rng))
    return open[std::uniform_int_distribution<size_t>(0, open.size() - 1)(rng)];
  unsigned chosen = open.front();
  for (unsigned t : open)
    if (getGradient(t) < getGradient(chosen))
      chosen = t;
  return chosen;
}

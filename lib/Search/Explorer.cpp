//===- Explorer.cpp - Evolutionary exploration with a cost model ----------===//

#include "ke/Search/Explorer.h"

#include "ke/Search/Features.h"

#include "llvm/ADT/StringSet.h"

#include <algorithm>

using namespace mlir;
using namespace ke;

Explorer::Explorer(SearchTask &task, std::unique_ptr<CostModel> model,
                   ExplorerOptions options)
    : task(task), model(std::move(model)), options(options) {}

const std::vector<float> &Explorer::featuresOf(const Schedule &schedule) {
  std::string id = getScheduleId(schedule);
  auto it = featureCache.find(id);
  if (it != featureCache.end())
    return it->second;
  return featureCache[id] =
             extractFeatures(task.getAnchor(), schedule, task.getTarget());
}

std::vector<float> Explorer::predict(ArrayRef<Schedule> schedules) {
  if (!model || trainedOn == 0)
    return std::vector<float>(schedules.size(), 0.f);
  std::vector<std::vector<float>> rows;
  rows.reserve(schedules.size());
  for (const Schedule &s : schedules)
    rows.push_back(featuresOf(s));
  return model->predict(rows);
}

void Explorer::retrain() {
  ArrayRef<MeasuredCandidate> history = task.getHistory();
  std::optional<double> best = task.getBestSeconds();
  if (!model || history.size() == trainedOn || !best)
    return;
  // Ansor's target: throughput normalized by the best, in (0, 1]; failed
  // candidates score 0 so the model learns to steer away from them.
  std::vector<std::vector<float>> rows;
  std::vector<float> scores;
  for (const MeasuredCandidate &c : history) {
    rows.push_back(featuresOf(c.schedule));
    scores.push_back(c.record.isValid() && c.record.measurement.median > 0
                         ? float(*best / c.record.measurement.median)
                         : 0.f);
  }
  model->train(rows, scores);
  trainedOn = history.size();
}

std::optional<Schedule> Explorer::mutate(const Schedule &parent) {
  if (parent.space.isSingleSchedule())
    return std::nullopt;
  std::mt19937_64 &rng = task.getRng();
  Schedule child = parent;
  unsigned knob = std::uniform_int_distribution<unsigned>(
      0, parent.space.knobs.size() - 1)(rng);
  unsigned size = parent.space.knobs[knob].choices.size();
  if (size < 2)
    return std::nullopt;
  unsigned &index = child.indices[knob];
  // Half the mutations step to a neighbouring value (fine moves), half jump
  // anywhere (escapes).
  if (std::bernoulli_distribution(0.5)(rng)) {
    bool up = index == 0 || (index + 1 < size &&
                             std::bernoulli_distribution(0.5)(rng));
    index = up ? index + 1 : index - 1;
  } else {
    unsigned other = std::uniform_int_distribution<unsigned>(0, size - 2)(rng);
    index = other >= index ? other + 1 : other;
  }
  return child;
}

std::optional<Schedule> Explorer::crossover(const Schedule &a,
                                            const Schedule &b) {
  if (a.rule != b.rule || a.indices.size() != b.indices.size())
    return std::nullopt;
  std::mt19937_64 &rng = task.getRng();
  Schedule child = a;
  for (unsigned k = 0; k < child.indices.size(); ++k)
    if (std::bernoulli_distribution(0.5)(rng))
      child.indices[k] = b.indices[k];
  return child;
}

std::vector<Schedule> Explorer::evolve() {
  std::mt19937_64 &rng = task.getRng();
  std::vector<Schedule> population;
  // Seed with the best measured (good building blocks), then random ones.
  std::vector<const MeasuredCandidate *> measured;
  for (const MeasuredCandidate &c : task.getHistory())
    if (c.record.isValid() && !c.record.earlyStop)
      measured.push_back(&c);
  // Ties keep history order (the pointers are in it): deterministic.
  llvm::sort(measured, [](const MeasuredCandidate *x,
                          const MeasuredCandidate *y) {
    double a = x->record.measurement.median, b = y->record.measurement.median;
    return a < b || (a == b && x < y);
  });
  unsigned fromMeasured = std::min<size_t>(
      measured.size(), size_t(options.measuredShare * options.populationSize));
  for (unsigned i = 0; i < fromMeasured; ++i)
    population.push_back(measured[i]->schedule);
  while (population.size() < options.populationSize) {
    std::optional<Schedule> s = task.sampleRandom();
    if (!s)
      break;
    population.push_back(std::move(*s));
  }
  if (population.empty())
    return {};

  // Every unmeasured schedule seen, with its best predicted score.
  llvm::StringMap<std::pair<float, size_t>> pool;
  std::vector<Schedule> seen;
  for (unsigned generation = 0;; ++generation) {
    std::vector<float> scores = predict(population);
    for (auto [schedule, score] : llvm::zip(population, scores)) {
      if (task.isMeasured(schedule))
        continue;
      auto [it, inserted] =
          pool.try_emplace(getScheduleId(schedule), score, seen.size());
      if (inserted)
        seen.push_back(schedule);
    }
    if (generation == options.generations)
      break;
    // Fitness-proportional parents.
    float lowest = *std::min_element(scores.begin(), scores.end());
    std::vector<double> weights;
    for (float s : scores)
      weights.push_back(double(s - lowest) + 1e-6);
    std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
    std::vector<Schedule> next;
    next.reserve(population.size());
    while (next.size() < population.size()) {
      const Schedule &parent = population[pick(rng)];
      std::optional<Schedule> child;
      for (int attempt = 0; attempt < 4 && !child; ++attempt) {
        child = std::bernoulli_distribution(options.mutationProbability)(rng)
                    ? mutate(parent)
                    : crossover(parent, population[pick(rng)]);
        if (child && !task.withinLimits(*child))
          child.reset();
      }
      next.push_back(child ? std::move(*child) : parent);
    }
    population = std::move(next);
  }

  std::vector<size_t> order(seen.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::vector<float> predicted(seen.size());
  for (size_t i = 0; i < seen.size(); ++i)
    predicted[i] = pool[getScheduleId(seen[i])].first;
  // Best predicted first; ties in the order they were seen.
  llvm::sort(order, [&](size_t x, size_t y) {
    return predicted[x] > predicted[y] ||
           (predicted[x] == predicted[y] && x < y);
  });
  std::vector<Schedule> ranked;
  for (size_t i : order)
    ranked.push_back(std::move(seen[i]));
  return ranked;
}

std::vector<Schedule> Explorer::propose(unsigned count) {
  retrain();
  std::vector<Schedule> ranked = evolve();
  unsigned randomPicks = unsigned(options.epsGreedy * count + 0.5);
  std::vector<Schedule> picked;
  llvm::StringSet<> ids;
  auto add = [&](const Schedule &s) {
    if (!task.isMeasured(s) && ids.insert(getScheduleId(s)).second)
      picked.push_back(s);
  };
  for (const Schedule &s : ranked) {
    if (picked.size() + randomPicks >= count)
      break;
    add(s);
  }
  // eps-greedy: random picks, and random fill when the model's pool ran dry.
  for (unsigned tries = 0; picked.size() < count && tries < 20 * count;
       ++tries) {
    std::optional<Schedule> s = task.sampleRandom();
    if (!s)
      break;
    add(*s);
  }
  return picked;
}

unsigned Explorer::runRound(unsigned maxTrials) {
  unsigned count = std::min(options.batchSize, maxTrials);
  return task.measureBatch(propose(count), SearchPhase::Explore);
}

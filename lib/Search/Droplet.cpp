//===- Droplet.cpp - Coordinate descent on knob indices -------------------===//

#include "ke/Search/Droplet.h"

#include "ke/Search/Statistics.h"

#include <algorithm>

using namespace mlir;
using namespace ke;

DropletSearch::DropletSearch(SearchTask &task, DropletOptions options)
    : task(task), options(options) {}

static bool isTimed(const MeasuredCandidate &c) {
  return c.record.isValid() && !c.record.earlyStop;
}

bool DropletSearch::startNext() {
  // A start that ended without beating the best it began with: more starts
  // from worse points will not either.
  if (current && bestAtStart && task.getBestSeconds() &&
      *task.getBestSeconds() >= *bestAtStart) {
    finished = true;
    return false;
  }
  current.reset();
  if (starts >= options.maxStarts) {
    finished = true;
    return false;
  }
  const MeasuredCandidate *start = nullptr;
  for (const MeasuredCandidate &c : task.getHistory())
    if (isTimed(c) && !usedStarts.contains(getScheduleId(c.schedule)) &&
        (!start ||
         c.record.measurement.median < start->record.measurement.median))
      start = &c;
  if (!start) {
    finished = true;
    return false;
  }
  ++starts;
  usedStarts.insert(getScheduleId(start->schedule));
  current = start->schedule;
  step = 1;
  bestAtStart = task.getBestSeconds();
  return true;
}

std::vector<Schedule> DropletSearch::neighbours(const Schedule &center) {
  std::vector<Schedule> singles, pairs;
  unsigned numKnobs = center.indices.size();
  auto moved = [&](Schedule &s, unsigned knob, int delta) {
    int index = int(s.indices[knob]) + delta;
    if (index < 0 || index >= int(s.space.knobs[knob].choices.size()))
      return false;
    s.indices[knob] = unsigned(index);
    return true;
  };
  int deltas[2] = {int(step), -int(step)};
  for (unsigned k = 0; k < numKnobs; ++k)
    for (int d : deltas) {
      Schedule s = center;
      if (moved(s, k, d) && task.withinLimits(s))
        singles.push_back(std::move(s));
    }
  for (unsigned k1 = 0; k1 < numKnobs; ++k1)
    for (unsigned k2 = k1 + 1; k2 < numKnobs; ++k2)
      for (int d1 : deltas)
        for (int d2 : deltas) {
          Schedule s = center;
          if (moved(s, k1, d1) && moved(s, k2, d2) && task.withinLimits(s))
            pairs.push_back(std::move(s));
        }
  std::shuffle(pairs.begin(), pairs.end(), task.getRng());
  if (pairs.size() > options.maxPairs)
    pairs.resize(options.maxPairs);
  singles.insert(singles.end(), pairs.begin(), pairs.end());
  return singles;
}

unsigned DropletSearch::runRound(unsigned maxTrials) {
  unsigned measured = 0;
  // Loop until something was measured: widening the step or restarting
  // measures nothing by itself.
  while (!finished && measured == 0 && maxTrials > 0) {
    if (!current && !startNext())
      break;
    const MeasuredCandidate *center = task.find(*current);
    std::vector<Schedule> around = neighbours(*current);
    bool exhausted = true;
    std::vector<Schedule> batch;
    llvm::StringSet<> inBatch;
    for (const Schedule &s : around) {
      if (task.isMeasured(s) || inBatch.contains(getScheduleId(s)))
        continue;
      if (measured + batch.size() == maxTrials) {
        exhausted = false;
        break;
      }
      inBatch.insert(getScheduleId(s));
      batch.push_back(s);
    }
    // One batch: a GPU evaluator builds the neighbours in parallel.
    measured += task.measureBatch(batch, SearchPhase::Droplet);
    center = task.find(*current); // measuring may have grown the history
    const MeasuredCandidate *bestNeighbour = nullptr;
    for (const Schedule &s : around) {
      const MeasuredCandidate *c = task.find(s);
      if (c && isTimed(*c) &&
          (!bestNeighbour || c->record.measurement.median <
                                 bestNeighbour->record.measurement.median))
        bestNeighbour = c;
    }
    if (bestNeighbour &&
        bestNeighbour->record.measurement.median <
            center->record.measurement.median &&
        welchLessPValue(bestNeighbour->record.measurement.seconds,
                        center->record.measurement.seconds) <
            options.significance) {
      current = bestNeighbour->schedule;
      step = 1;
      ++moves;
      continue;
    }
    if (!exhausted)
      break; // the budget ran out mid-neighbourhood
    unsigned widest = 0;
    for (const Knob &knob : current->space.knobs)
      widest = std::max<unsigned>(widest, knob.choices.size());
    step *= 2;
    if (step >= widest && !startNext())
      break;
  }
  return measured;
}

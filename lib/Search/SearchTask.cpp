//===- SearchTask.cpp - The search state of one workload ------------------===//

#include "ke/Search/SearchTask.h"

#include "llvm/ADT/StringSet.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace ke;

llvm::StringRef ke::stringifySearchPhase(SearchPhase phase) {
  switch (phase) {
  case SearchPhase::Previous: return "previous";
  case SearchPhase::Untuned: return "untuned";
  case SearchPhase::Random: return "random";
  case SearchPhase::Explore: return "explore";
  case SearchPhase::Droplet: return "droplet";
  case SearchPhase::Proposed: return "proposed";
  }
  return "?";
}

std::string ke::getScheduleId(const Schedule &schedule) {
  std::string id = schedule.rule ? schedule.rule->getName().str() : "?";
  id += ':';
  id += llvm::join(llvm::map_range(schedule.indices,
                                   [](unsigned i) { return llvm::utostr(i); }),
                   ",");
  return id;
}

SearchTask::SearchTask(Operation *anchor, const TargetDescription &target,
                       llvm::SmallVector<Schedule> sketches, MeasureFn measure,
                       uint64_t seed)
    : anchor(anchor), target(&target), sketches(std::move(sketches)),
      measureFn(std::move(measure)), rng(seed), sampler(seed ^ 0x9e3779b97f4a7c15ull) {}

bool SearchTask::withinLimits(const Schedule &schedule) const {
  std::string reason;
  return succeeded(schedule.rule->checkLimits(
      anchor, *target, schedule.getAssignment(), reason));
}

std::optional<Schedule> SearchTask::sampleRandom() {
  return sampler.sampleAny(sketches, anchor, *target);
}

const MeasuredCandidate *SearchTask::find(const Schedule &schedule) const {
  auto it = measuredIds.find(getScheduleId(schedule));
  return it == measuredIds.end() ? nullptr : &history[it->second];
}

std::optional<double> SearchTask::getBestSeconds() const {
  if (!bestIndex)
    return std::nullopt;
  return history[*bestIndex].record.measurement.median;
}

unsigned SearchTask::countPhase(SearchPhase phase) const {
  return llvm::count_if(history, [&](const MeasuredCandidate &c) {
    return c.phase == phase;
  });
}

void SearchTask::append(MeasuredCandidate candidate) {
  measuredIds[getScheduleId(candidate.schedule)] = history.size();
  const CandidateRecord &record = candidate.record;
  // An early-stopped candidate was timed once, beyond 10x the best: it is
  // never the best.
  if (record.isValid() && !record.earlyStop &&
      (!bestIndex ||
       record.measurement.median <
           history[*bestIndex].record.measurement.median))
    bestIndex = history.size();
  history.push_back(std::move(candidate));
}

void SearchTask::addRecord(const Schedule &schedule, CandidateRecord record,
                           SearchPhase phase) {
  if (isMeasured(schedule))
    return;
  if (phase == SearchPhase::Previous)
    ++numPrevious;
  append({schedule, std::move(record), phase});
}

const MeasuredCandidate &SearchTask::measure(const Schedule &schedule,
                                             SearchPhase phase) {
  auto it = measuredIds.find(getScheduleId(schedule));
  if (it != measuredIds.end())
    return history[it->second];
  return appendMeasured(
      {schedule, measureFn(schedule, getBestSeconds()), phase});
}

const MeasuredCandidate &
SearchTask::appendMeasured(MeasuredCandidate candidate) {
  ++numMeasured;
  append(std::move(candidate));
  if (onMeasured)
    onMeasured(history.back());
  return history.back();
}

unsigned SearchTask::measureBatch(llvm::ArrayRef<Schedule> schedules,
                                  SearchPhase phase) {
  std::vector<Schedule> pending;
  llvm::StringSet<> ids;
  for (const Schedule &s : schedules) {
    std::string id = getScheduleId(s);
    if (!measuredIds.contains(id) && ids.insert(id).second)
      pending.push_back(s);
  }
  if (!batchMeasureFn) {
    for (const Schedule &s : pending)
      measure(s, phase);
    return pending.size();
  }
  batchMeasureFn(
      pending, [this] { return getBestSeconds(); },
      [&](unsigned index, CandidateRecord record) {
        appendMeasured({pending[index], std::move(record), phase});
      });
  return pending.size();
}

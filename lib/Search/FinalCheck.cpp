//===- FinalCheck.cpp - The search's finalists re-timed side by side ------===//

#include "ke/Search/FinalCheck.h"

#include <algorithm>

using namespace ke;

bool Finalist::isQualified(unsigned numRounds) const {
  return rounds.size() == numRounds && numRounds > 0 &&
         llvm::all_of(rounds,
                      [](const CandidateRecord &r) { return r.isValid(); });
}

const CandidateRecord &Finalist::getMedianRound() const {
  std::vector<const CandidateRecord *> sorted;
  for (const CandidateRecord &r : rounds)
    sorted.push_back(&r);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const CandidateRecord *a, const CandidateRecord *b) {
                     return a->measurement.median < b->measurement.median;
                   });
  return *sorted[(sorted.size() - 1) / 2];
}

const Finalist *FinalCheck::getUntuned() const {
  for (const Finalist &f : finalists)
    if (f.untuned)
      return &f;
  return nullptr;
}

llvm::json::Value FinalCheck::toJSON() const {
  llvm::json::Array entries;
  for (const Finalist &f : finalists) {
    llvm::json::Object o{{"schedule", getScheduleId(f.schedule)},
                         {"recorded_seconds", f.recorded.measurement.median}};
    if (f.untuned)
      o["untuned"] = true;
    llvm::json::Array medians;
    for (const CandidateRecord &r : f.rounds)
      medians.push_back(r.isValid() ? llvm::json::Value(r.measurement.median)
                                    : llvm::json::Value(nullptr));
    o["round_seconds"] = std::move(medians);
    if (f.isQualified(rounds))
      o["seconds"] = f.getMedianRound().measurement.median;
    else if (!f.rounds.empty())
      o["error"] = stringifyErrorClass(f.rounds.back().error);
    entries.push_back(std::move(o));
  }
  llvm::json::Object o{{"rounds", rounds},
                       {"finalists", std::move(entries)},
                       {"changed_best", changedBest()}};
  if (winner)
    o["winner"] = *winner;
  return o;
}

std::optional<FinalCheck> ke::runFinalCheck(
    const SearchTask &task, const Schedule &untuned,
    const BatchMeasureFn &measure, const FinalCheckOptions &options,
    llvm::function_ref<void(const Finalist &, const CandidateRecord &)>
        onRecord) {
  if (!options.finalists || !options.rounds)
    return std::nullopt;
  // Valid, fully timed candidates, fastest first (the search's best first:
  // among equal medians it is the earliest, as the task keeps it).
  std::vector<const MeasuredCandidate *> ranked;
  for (const MeasuredCandidate &c : task.getHistory())
    if (c.record.isValid() && !c.record.earlyStop &&
        c.record.measurement.median > 0)
      ranked.push_back(&c);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const MeasuredCandidate *a, const MeasuredCandidate *b) {
                     return a->record.measurement.median <
                            b->record.measurement.median;
                   });
  if (ranked.empty())
    return std::nullopt;
  double limit = ranked.front()->record.measurement.median * options.margin;
  const MeasuredCandidate *untunedEntry = task.find(untuned);
  FinalCheck check;
  check.rounds = options.rounds;
  auto add = [&](const MeasuredCandidate &c) {
    check.finalists.push_back(
        {c.schedule, c.record, /*untuned=*/&c == untunedEntry, {}});
  };
  for (const MeasuredCandidate *c : ranked) {
    if (check.finalists.size() == options.finalists ||
        c->record.measurement.median > limit)
      break;
    add(*c);
  }
  // The untuned default is always a finalist, however it was recorded: the
  // schedule kept must not be slower than it, and one unlucky recording is
  // no proof (on this project's Emerald Rapids a softmax default recorded
  // 15.4 us lost to a 13.5 us record that re-timed at 17.4 us).
  if (untunedEntry && !check.getUntuned() && untunedEntry->record.isValid() &&
      !untunedEntry->record.earlyStop)
    add(*untunedEntry);
  if (check.finalists.size() < 2)
    return std::nullopt;

  for (unsigned round = 0; round < options.rounds; ++round) {
    // A finalist that failed once is out; the others are timed again, in
    // the same order every round.
    std::vector<unsigned> alive;
    std::vector<Schedule> schedules;
    for (unsigned i = 0; i < check.finalists.size(); ++i)
      if (check.finalists[i].isQualified(round) || round == 0) {
        alive.push_back(i);
        schedules.push_back(check.finalists[i].schedule);
      }
    if (alive.empty())
      break;
    measure(
        schedules, [] { return std::optional<double>(); },
        [&](unsigned index, CandidateRecord record) {
          Finalist &f = check.finalists[alive[index]];
          f.rounds.push_back(std::move(record));
          onRecord(f, f.rounds.back());
        });
  }
  for (unsigned i = 0; i < check.finalists.size(); ++i) {
    const Finalist &f = check.finalists[i];
    if (!f.isQualified(check.rounds))
      continue;
    if (!check.winner ||
        f.getMedianRound().measurement.median <
            check.finalists[*check.winner].getMedianRound().measurement.median)
      check.winner = i;
  }
  return check;
}

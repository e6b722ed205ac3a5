//===- Tuner.cpp - Tuning workloads: explore, then droplet ----------------===//
//
// Map of the Search component (docs/tuning.md):
//   Tuner.cpp          tuneWorkloads: per workload an Evaluator
//                      (ke/Measure), a SearchTask resumed from earlier
//                      records, the reference and untuned runs, then rounds
//                      of explore + droplet handed out by the TaskScheduler;
//                      every measured candidate goes to the records file,
//                      the log and the database (RecordSink)
//   SearchTask.cpp     one workload's candidates, measured and pending
//   ExploreThenDroplet.cpp  one workload's rounds: explore, droplet, and
//                      restarts while budget is left
//   Explorer.cpp       Ansor-style evolution guided by the cost model
//   Droplet.cpp        coordinate descent on the best schedule's knobs
//   TaskScheduler.cpp  the trial budget split across workloads by gradient
//   CostModel.cpp,     the learned cost model (XGBoost via dlopen, a
//   XGBoostCostModel.cpp nearest-neighbour fallback)
//   Features.cpp       loop-nest features of a schedule for the model
//   Statistics.cpp     Welch's t-test and friends for droplet's decisions
//   TuningOutput.cpp   the progress line, the convergence log, records
// Search measures only through the Evaluator interface and reads and writes
// records only through ke/TunedSchedules.
//
//===----------------------------------------------------------------------===//

#include "ke/Search/Tuner.h"

#include "TuningOutput.h"

#include "ke/Database/Database.h"
#include "ke/Search/ExploreThenDroplet.h"
#include "ke/Search/Features.h"
#include "ke/TunedSchedules/TunedSchedules.h"
#include "ke/Workload/Kernel.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SHA256.h"

#include <chrono>
#include <list>
#include <thread>

using namespace mlir;
using namespace ke;

uint64_t ke::getWorkloadSeed(llvm::StringRef key, uint64_t seed) {
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(key));
  uint64_t mixed = seed;
  for (int i = 0; i < 8; ++i)
    mixed = mixed * 131 + digest[i];
  return mixed;
}

Operation *ke::getTuningAnchor(const Workload &workload,
                               const TargetDescription &target) {
  return getFirstGroupAnchor(workload.firstOp, workload.key,
                             getKernelFusion(target));
}

EvaluatorOptions ke::getTuningEvaluatorOptions(const Workload &workload,
                                               const TargetDescription &target,
                                               const TuneOptions &options,
                                               unsigned numWorkloads) {
  EvaluatorOptions evaluatorOptions = options.evaluator;
  evaluatorOptions.seed = getWorkloadSeed(workload.key, options.seed);
  // Measured as compile will apply it.
  evaluatorOptions.fusion = getKernelFusion(target);
  // Input sets of many workloads live at once: share a budget.
  evaluatorOptions.maxInputBytes =
      std::max<uint64_t>(64ull << 20, evaluatorOptions.maxInputBytes /
                                          std::max(1u, numWorkloads));
  return evaluatorOptions;
}

llvm::json::Value TuningResult::toJSON() const {
  llvm::json::Object o{{"key", key}, {"op", opName}, {"count", count}};
  if (flops)
    o["flops"] = *flops;
  if (!fusedInto.empty()) {
    o["fused_into"] = fusedInto;
    return o;
  }
  if (!skipped.empty()) {
    o["skipped"] = skipped;
    return o;
  }
  auto seconds = [](const std::optional<CandidateRecord> &r) {
    return r && r->isValid() ? llvm::json::Value(r->measurement.median)
                             : llvm::json::Value(nullptr);
  };
  o["reference_seconds"] = seconds(reference);
  o["untuned_seconds"] = seconds(untuned);
  o["best_seconds"] = seconds(best);
  // Against the untuned default's re-timing when the final check timed it
  // beside the winner (one run, one conditions), else its first record.
  const Finalist *untunedFinalist =
      finalCheck ? finalCheck->getUntuned() : nullptr;
  if (untunedFinalist && untunedFinalist->isQualified(finalCheck->rounds)) {
    double seconds = untunedFinalist->getMedianRound().measurement.median;
    o["untuned_rechecked_seconds"] = seconds;
    if (best)
      o["speedup_over_untuned"] = seconds / best->measurement.median;
  } else if (best && untuned && untuned->isValid()) {
    o["speedup_over_untuned"] =
        untuned->measurement.median / best->measurement.median;
  }
  if (best && flops)
    o["best_gflops"] = *flops / best->measurement.median / 1e9;
  if (best)
    o["best_schedule"] = best->schedule->toJSON();
  o["trials"] = trials;
  o["valid"] = valid;
  o["explored"] = explored;
  o["droplet"] = droplet;
  if (proposer) {
    o["proposed"] = proposed;
    o["proposer"] = proposer->toJSON();
  }
  o["droplet_moves"] = dropletMoves;
  o["restarts"] = restarts;
  o["search_seconds"] = searchSeconds;
  if (searchSeconds > 0)
    o["trials_per_minute"] = trials / searchSeconds * 60;
  o["previous"] = previous;
  o["transfer_samples"] = transferSamples;
  o["transfer_workloads"] = transferWorkloads;
  o["stopped"] = stopped;
  if (finalCheck)
    o["final_check"] = finalCheck->toJSON();
  llvm::json::Object counts;
  for (unsigned i = 1; i < kNumErrorClasses; ++i)
    counts[stringifyErrorClass(ErrorClass(i))] = errors[i];
  o["errors"] = std::move(counts);
  return o;
}

namespace {

/// One workload being tuned.
struct WorkloadTuning {
  const Workload *workload;
  /// The occurrence measured: the first that anchors a kernel group of its
  /// own (getFirstGroupAnchor).
  Operation *anchor = nullptr;
  unsigned index;
  TuningResult result;
  std::unique_ptr<Evaluator> evaluator;
  std::unique_ptr<SearchTask> task;
  /// The default search (null for --search=random).
  std::unique_ptr<ExploreThenDroplet> search;
  /// The sketch's default schedule, measured before the search.
  std::optional<Schedule> untuned;
  /// Failed proposer calls already noted on the progress line.
  unsigned notedProposerFailures = 0;
};

/// Writes a candidate to the database, the records file and the log; a
/// database error is reported once and tuning goes on without it.
class RecordSink {
public:
  RecordSink(const TuneOptions &options, const TargetDescription &target,
             ProgressLine &progress)
      : options(options), target(target), progress(progress),
        log(options.log), database(options.database) {}

  /// `phase`: the search operator that produced a trial (explore,
  /// droplet, proposed...), for the records file.
  void add(const WorkloadTuning &w, const CandidateRecord &candidate,
           llvm::StringRef role, llvm::StringRef phase = "") {
    // The database first: a run killed between the two has every record
    // of the records file in the database.
    if (database) {
      TuningRecord record =
          makeTuningRecord(candidate, *w.workload, target, role);
      // Trials keep their features for other workloads' cost models.
      if (role == "trial" && candidate.schedule) {
        record.features = extractFeatures(w.evaluator->getKernelAnchor(),
                                          *candidate.schedule, target);
        record.featuresVersion = getFeaturesVersion();
      }
      // A record the database refuses is reported and lost; after a few
      // failures in a row (a full disk, a broken file) saving stops.
      if (llvm::Error error = database->addRecords(record)) {
        progress.note("database error, record not saved: " +
                      llvm::toString(std::move(error)));
        if (++failuresInARow == 3) {
          progress.note("saving to the database stops after 3 failures in "
                        "a row");
          database = nullptr;
        }
      } else {
        failuresInARow = 0;
      }
    }
    if (options.records) {
      llvm::json::Value json = candidate.toJSON();
      json.getAsObject()->insert({"workload", w.workload->key});
      json.getAsObject()->insert({"role", role});
      if (!phase.empty())
        json.getAsObject()->insert({"phase", phase});
      json.getAsObject()->insert({"target", target.name});
      *options.records << json << '\n';
      options.records->flush();
    }
  }
  ConvergenceLog &getLog() { return log; }

private:
  const TuneOptions &options;
  const TargetDescription &target;
  ProgressLine &progress;
  ConvergenceLog log;
  TuningDatabase *database;
  unsigned failuresInARow = 0;
};

/// `w`'s cost model: the default one, warm-started with other workloads'
/// trials from the database (TuneOptions::transferSamples), each scored
/// against its own workload's best there, failures 0, as the explorer
/// scores its own.
std::unique_ptr<CostModel>
createWorkloadCostModel(WorkloadTuning &w, const TargetDescription &target,
                        const TuneOptions &options, uint64_t seed,
                        ProgressLine &progress) {
  std::unique_ptr<CostModel> model = createDefaultCostModel(seed);
  if (!options.database || !options.transferSamples)
    return model;
  llvm::Expected<std::vector<TuningDatabase::TransferSample>> samples =
      options.database->getTransferSamples(target.name, getFeaturesVersion(),
                                           w.workload->key,
                                           options.transferSamples);
  if (!samples) {
    progress.note("cannot read other workloads' trials: " +
                  llvm::toString(samples.takeError()));
    return model;
  }
  llvm::StringMap<double> best;
  for (const TuningDatabase::TransferSample &sample : *samples)
    if (sample.seconds) {
      auto [it, inserted] = best.try_emplace(sample.workloadKey, *sample.seconds);
      it->second = std::min(it->second, *sample.seconds);
    }
  std::vector<std::vector<float>> rows;
  std::vector<float> scores;
  for (TuningDatabase::TransferSample &sample : *samples) {
    auto it = best.find(sample.workloadKey);
    // Workloads without a valid trial say nothing about what is fast.
    if (it == best.end() || sample.features.size() != getNumFeatures())
      continue;
    scores.push_back(sample.seconds ? float(it->second / *sample.seconds) : 0.f);
    rows.push_back(std::move(sample.features));
  }
  w.result.transferSamples = rows.size();
  w.result.transferWorkloads = best.size();
  if (rows.empty())
    return model;
  return createTransferCostModel(std::move(model), std::move(rows),
                                 std::move(scores));
}

/// Creates the evaluator and search task of `w`, takes earlier records from
/// the database and measures the untuned default. False when the workload
/// cannot be tuned (`result.skipped` says why).
bool prepare(WorkloadTuning &w, const TargetDescription &target,
             const TuneOptions &options, unsigned numWorkloads,
             RecordSink &sink, ProgressLine &progress, Proposer *proposer) {
  const Workload &workload = *w.workload;
  std::string reason;
  ScopedDiagnosticHandler handler(w.anchor->getContext(),
                                  [&](Diagnostic &diag) {
                                    if (reason.empty())
                                      reason = diag.str();
                                    return success();
                                  });
  uint64_t seed = getWorkloadSeed(workload.key, options.seed);
  EvaluatorOptions evaluatorOptions =
      getTuningEvaluatorOptions(workload, target, options, numWorkloads);
  progress.note(llvm::formatv("workload {0}/{1} {2}: running the reference",
                              w.index + 1, numWorkloads, workload.opName)
                    .str());
  FailureOr<std::unique_ptr<Evaluator>> created =
      options.createEvaluator
          ? options.createEvaluator(w.index, w.anchor, target,
                                    evaluatorOptions)
          : createEvaluator(w.anchor, target, evaluatorOptions);
  if (failed(created)) {
    w.result.skipped = reason.empty() ? "cannot be evaluated" : reason;
    return false;
  }
  w.evaluator = std::move(*created);
  Operation *anchor = w.evaluator->getKernelAnchor();
  SmallVector<Schedule> sketches = getCandidateSketches(anchor, target);
  if (sketches.empty()) {
    w.result.skipped = "no sketch rule applies";
    return false;
  }
  Schedule untuned = sketches.front();
  w.untuned = untuned;
  Evaluator *evaluator = w.evaluator.get();
  w.task = std::make_unique<SearchTask>(
      anchor, target, std::move(sketches),
      [evaluator](const Schedule &s, std::optional<double> best) {
        return evaluator->evaluate(s, best);
      },
      seed);
  w.task->setBatchMeasure(
      [evaluator](llvm::ArrayRef<Schedule> schedules,
                  llvm::function_ref<std::optional<double>()> best,
                  llvm::function_ref<void(unsigned, CandidateRecord)> onRecord) {
        evaluator->evaluateBatch(schedules, best, onRecord);
      });

  if (options.database) {
    llvm::Expected<std::vector<TuningRecord>> previous =
        options.database->getRecords(workload.key, target.name);
    if (!previous) {
      progress.note("cannot read earlier records: " +
                    llvm::toString(previous.takeError()));
    } else {
      std::string hash = getPipelineHash(target);
      for (const TuningRecord &record : *previous) {
        // Stale (another pipeline) or unreadable records are misses.
        if (record.role != "trial" || record.pipelineHash != hash)
          continue;
        auto read = readTuningRecord(record, anchor, target);
        if (!read) {
          llvm::consumeError(read.takeError());
          continue;
        }
        w.task->addRecord(read->first, std::move(read->second));
      }
    }
    if (llvm::Error error = options.database->addWorkload(
            {workload.key, workload.opName,
             getCanonicalSignature(w.anchor)}))
      progress.note("database error: " + llvm::toString(std::move(error)));
  }
  w.result.previous = w.task->getNumPrevious();

  w.result.reference = w.evaluator->evaluateReference();
  sink.add(w, *w.result.reference, "reference");
  // The untuned default is measured in every run: it is the baseline of the
  // speedup, and a search candidate like the others afterwards.
  CandidateRecord untunedRecord = w.evaluator->evaluate(untuned);
  sink.add(w, untunedRecord, "untuned");
  w.result.untuned = untunedRecord;
  w.task->addRecord(untuned, untunedRecord, SearchPhase::Untuned);

  if (options.strategy == SearchStrategy::ExploreThenDroplet) {
    ExploreThenDropletOptions search{options.explore, options.explorer,
                                     options.droplet,
                                     options.stopWhenConverged};
    if (proposer) {
      w.result.proposer.emplace();
      search.proposer = proposer;
      search.proposalsPerRound = options.proposer.perRound;
      search.proposerStats = &*w.result.proposer;
    }
    w.search = std::make_unique<ExploreThenDroplet>(
        *w.task, createWorkloadCostModel(w, target, options, seed, progress),
        search);
  }
  return true;
}

/// One round of `w`'s search, at most `maxTrials` candidates. Returns how
/// many were measured; 0 ends the workload's search (`stopped` says why).
unsigned runRound(WorkloadTuning &w, const TuneOptions &options,
                  unsigned maxTrials, ProgressLine &progress) {
  SearchTask &task = *w.task;
  if (options.strategy == SearchStrategy::Random) {
    std::vector<Schedule> batch;
    llvm::StringSet<> inBatch;
    for (unsigned tries = 0;
         batch.size() < std::min(options.explorer.batchSize, maxTrials) &&
         tries < 1000;
         ++tries) {
      std::optional<Schedule> s = task.sampleRandom();
      if (!s)
        break;
      if (!task.isMeasured(*s) && inBatch.insert(getScheduleId(*s)).second)
        batch.push_back(*s);
    }
    unsigned measured = task.measureBatch(batch, SearchPhase::Random);
    if (!measured)
      w.result.stopped = "exhausted";
    return measured;
  }
  unsigned measured = w.search->runRound(maxTrials);
  if (!measured)
    w.result.stopped = w.search->getStopReason().str();
  // A failing proposer is noted (the first 3 times), never the end.
  if (const std::optional<ProposerStats> &stats = w.result.proposer)
    for (; w.notedProposerFailures < std::min(3u, stats->failedCalls);
         ++w.notedProposerFailures)
      progress.note("proposer: " + (stats->messages.empty()
                                        ? std::string("failed")
                                        : stats->messages.back()));
  return measured;
}

/// Re-times `w`'s finalists side by side (ke/Search/FinalCheck.h): every
/// re-timing is recorded with role "recheck", the winner's median round
/// with role "final", which the database prefers to the trials before it.
/// `separateBatches`: one candidate per batch, so that the evaluator of
/// concurrent rounds (GPU targets, MPI runs), which splits a batch across
/// devices, times them all on rank 0's device.
void runWorkloadFinalCheck(WorkloadTuning &w, const TuneOptions &options,
                           unsigned numWorkloads, bool separateBatches,
                           RecordSink &sink, ProgressLine &progress) {
  if (!w.task || !w.untuned || !options.finalCheck.finalists)
    return;
  Evaluator *evaluator = w.evaluator.get();
  BatchMeasureFn measure =
      [evaluator, separateBatches](
          llvm::ArrayRef<Schedule> schedules,
          llvm::function_ref<std::optional<double>()> best,
          llvm::function_ref<void(unsigned, CandidateRecord)> onRecord) {
        if (!separateBatches)
          return evaluator->evaluateBatch(schedules, best, onRecord);
        for (unsigned i = 0; i < schedules.size(); ++i)
          evaluator->evaluateBatch(
              schedules.slice(i, 1), best,
              [&](unsigned, CandidateRecord r) { onRecord(i, std::move(r)); });
      };
  std::string name = llvm::formatv("workload {0}/{1} {2}: final check", w.index + 1,
                                   numWorkloads, w.workload->opName)
                         .str();
  bool noted = false;
  std::optional<FinalCheck> check = runFinalCheck(
      *w.task, *w.untuned, measure, options.finalCheck,
      [&](const Finalist &f, const CandidateRecord &record) {
        if (!std::exchange(noted, true))
          progress.note(name + " (the fastest candidates and the untuned "
                               "default re-timed in alternating rounds)");
        sink.add(w, record, "recheck", f.untuned ? "untuned" : "");
      });
  if (!check)
    return;
  std::string outcome = llvm::formatv(" of {0} finalists x {1} rounds: ",
                                      check->finalists.size(), check->rounds);
  if (!check->winner) {
    outcome += "every finalist failed a re-timing; the search's best stands";
  } else {
    const CandidateRecord &record =
        check->finalists[*check->winner].getMedianRound();
    sink.add(w, record, "final");
    w.result.best = record;
    const Finalist &searchBest = check->finalists.front();
    if (!check->changedBest())
      outcome += "the search's best stands";
    else if (!searchBest.isQualified(check->rounds))
      outcome += "the search's best failed a re-timing (" +
                 stringifyErrorClass(searchBest.rounds.back().error).str() +
                 "); another finalist replaces it";
    else
      outcome += llvm::formatv(
          "{0} replaces the search's best, which re-timed {1:P} slower",
          check->finalists[*check->winner].untuned ? "the untuned default"
                                                   : "another finalist",
          searchBest.getMedianRound().measurement.median /
                  record.measurement.median -
              1);
  }
  progress.note(name + outcome);
  w.result.finalCheck = std::move(check);
}

using Clock = std::chrono::steady_clock;
Clock::time_point now() { return Clock::now(); }
double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(now() - start).count();
}

/// The rounds of the `active` workloads' search with up to
/// getMaxRounds() of them in flight (ke/Search/ConcurrentRounds.h): each
/// round runs in a thread of its own that holds the baton except while it
/// waits for measurements; this thread hands out rounds by the task
/// scheduler, never two of one workload at once, and gives each at most an
/// exploration batch of the budget left, and no more than its share of it
/// beside the rounds that could start with it.
void runConcurrentRounds(std::vector<WorkloadTuning> &tunings,
                         llvm::ArrayRef<unsigned> active,
                         TaskScheduler &scheduler, const TuneOptions &options,
                         unsigned &done, unsigned totalBudget,
                         ProgressLine &progress,
                         std::unique_lock<std::mutex> &baton) {
  ConcurrentRounds &rounds = *options.concurrent;
  struct Flight {
    unsigned slot, budget, measured = 0;
    bool ended = false;
    std::thread thread;
  };
  std::list<Flight> flights;
  std::vector<bool> busy(active.size(), false);
  // Trials promised to the rounds in flight.
  unsigned promised = 0;
  while (true) {
    while (flights.size() < rounds.getMaxRounds() &&
           done + promised < totalBudget) {
      std::optional<unsigned> slot =
          scheduler.pick([&](unsigned s) { return bool(busy[s]); });
      if (!slot)
        break;
      // The budget not promised yet, shared with the rounds that could
      // still start beside this one (the first round of a run must not
      // take what the others need to start at all).
      unsigned unfinished = 0;
      for (unsigned s = 0; s < active.size(); ++s)
        unfinished += !scheduler.isFinished(s);
      // The picked workload is unfinished and has no round in flight.
      unsigned starting =
          std::min(rounds.getMaxRounds(), unfinished) - flights.size();
      unsigned left = totalBudget - done - promised;
      Flight &flight = flights.emplace_back();
      flight.slot = *slot;
      flight.budget = std::min((left + starting - 1) / starting,
                               options.explorer.batchSize);
      busy[*slot] = true;
      promised += flight.budget;
      WorkloadTuning &w = tunings[active[*slot]];
      flight.thread = std::thread([&rounds, &flight, &w, &options, &progress] {
        std::unique_lock<std::mutex> held(rounds.baton);
        auto start = now();
        flight.measured = runRound(w, options, flight.budget, progress);
        w.result.searchSeconds += secondsSince(start);
        flight.ended = true;
        rounds.changed.notify_all();
      });
    }
    if (flights.empty())
      break;
    rounds.setRoundsInFlight(flights.size());
    rounds.wait(baton);
    for (auto it = flights.begin(); it != flights.end();) {
      if (!it->ended) {
        ++it;
        continue;
      }
      // It set `ended` holding the baton and let go of it right after.
      it->thread.join();
      if (!it->measured)
        scheduler.markFinished(it->slot);
      scheduler.update(it->slot,
                       tunings[active[it->slot]].task->getBestSeconds());
      busy[it->slot] = false;
      promised -= it->budget;
      it = flights.erase(it);
    }
  }
}

} // namespace

ConcurrentRounds::~ConcurrentRounds() = default;

std::vector<TuningResult> ke::tuneWorkloads(ArrayRef<Workload> workloads,
                                            const TargetDescription &target,
                                            const TuneOptions &options) {
  unsigned n = workloads.size();
  std::vector<WorkloadTuning> tunings(n);
  ProgressLine progress(options.showProgress, 0);
  RecordSink sink(options, target, progress);
  std::unique_ptr<Proposer> proposer = createProposer(options.proposer);

  // Prepare every workload (reference, earlier records, untuned default).
  std::vector<unsigned> active;
  unsigned totalBudget = 0;
  std::vector<double> weights;
  for (unsigned i = 0; i < n; ++i) {
    WorkloadTuning &w = tunings[i];
    w.workload = &workloads[i];
    w.index = i;
    w.result.key = workloads[i].key;
    w.result.opName = workloads[i].opName;
    w.result.flops = workloads[i].flops;
    w.result.count = workloads[i].count();
    // Fills and elementwise consumers fused into another anchor's kernel are
    // measured (and applied) as part of it: no budget of their own.
    w.anchor = getTuningAnchor(workloads[i], target);
    if (!w.anchor) {
      w.result.fusedInto = computeWorkloadKey(
          getFusingAnchor(workloads[i].firstOp, getKernelFusion(target)));
      continue;
    }
    if (!prepare(w, target, options, n, sink, progress, proposer.get())) {
      progress.note("skipping " + workloads[i].opName + " (" +
                    workloads[i].key + "): " + w.result.skipped);
      continue;
    }
    unsigned done = w.task->getNumPrevious();
    totalBudget += options.trials > done ? options.trials - done : 0;
    active.push_back(i);
    weights.push_back(double(workloads[i].count()));
  }

  ProgressLine searchProgress(options.showProgress, totalBudget);
  unsigned done = 0;
  for (unsigned i : active) {
    WorkloadTuning &w = tunings[i];
    w.task->onMeasured = [&, i](const MeasuredCandidate &c) {
      WorkloadTuning &t = tunings[i];
      ++done;
      ++t.result.trials;
      if (c.record.isValid())
        ++t.result.valid;
      ++t.result.errors[unsigned(c.record.error)];
      if (c.phase == SearchPhase::Droplet)
        ++t.result.droplet;
      else if (c.phase == SearchPhase::Proposed)
        ++t.result.proposed;
      else
        ++t.result.explored;
      sink.add(t, c.record, "trial", stringifySearchPhase(c.phase));
      sink.getLog().add(done, *t.workload, c, t.task->getBestSeconds(),
                        searchProgress.getElapsedSeconds());
      searchProgress.update(done, i, n, *t.workload, c.phase,
                            t.task->getBestSeconds());
    };
  }

  // Every sketch whose space is one schedule (cpu.loops and
  // cpu.loops.parallel: the reference's own loops) is measured once before
  // the search, so that the best is never slower than it; the sampler draws
  // among the others.
  auto searchStart = now();
  for (unsigned i : active) {
    WorkloadTuning &w = tunings[i];
    auto start = now();
    std::vector<Schedule> single;
    for (const Schedule &sketch : w.task->getSketches())
      if (sketch.space.isSingleSchedule() && !w.task->isMeasured(sketch) &&
          done + single.size() < totalBudget && w.task->withinLimits(sketch))
        single.push_back(sketch);
    w.task->measureBatch(single, SearchPhase::Explore);
    w.result.searchSeconds += secondsSince(start);
  }

  TaskScheduler scheduler(weights, options.seed, options.scheduler);
  for (unsigned slot = 0; slot < active.size(); ++slot)
    if (options.trials <= tunings[active[slot]].task->getNumPrevious()) {
      tunings[active[slot]].result.stopped = "budget";
      scheduler.markFinished(slot);
    }
  bool concurrent = false;
  std::unique_lock<std::mutex> baton;
  if (options.concurrent && options.concurrent->getMaxRounds() > 1) {
    baton = std::unique_lock<std::mutex>(options.concurrent->baton);
    concurrent = options.concurrent->begin();
    if (!concurrent)
      baton.unlock();
  }
  if (concurrent) {
    runConcurrentRounds(tunings, active, scheduler, options, done, totalBudget,
                        searchProgress, baton);
    options.concurrent->end();
    baton.unlock();
  }
  while (!concurrent && done < totalBudget) {
    std::optional<unsigned> slot = scheduler.pick();
    if (!slot)
      break;
    WorkloadTuning &w = tunings[active[*slot]];
    auto start = now();
    unsigned measured =
        runRound(w, options, totalBudget - done, searchProgress);
    w.result.searchSeconds += secondsSince(start);
    if (!measured)
      scheduler.markFinished(*slot);
    scheduler.update(*slot, w.task->getBestSeconds());
  }
  searchProgress.finish();
  if (options.searchWallSeconds)
    *options.searchWallSeconds = secondsSince(searchStart);

  std::vector<TuningResult> results;
  for (WorkloadTuning &w : tunings) {
    if (w.task) {
      if (const MeasuredCandidate *best = w.task->getBest())
        w.result.best = best->record;
      runWorkloadFinalCheck(w, options, n, options.concurrent != nullptr,
                            sink, progress);
      if (w.search) {
        w.result.dropletMoves = w.search->getNumDropletMoves();
        w.result.restarts = w.search->getNumRestarts();
      }
      if (w.result.stopped.empty())
        w.result.stopped = "budget";
    }
    results.push_back(std::move(w.result));
  }
  return results;
}

//===- DistributedTuning.cpp - Tuning with the ranks of an mpirun ---------===//
//
// The messages, all JSON objects from rank 0 to a serving rank:
//   {"op": "prepare", "workload": i}  make workload i's evaluator
//   {"op": "batch", "workload": i, "best": seconds|null,
//    "schedules": [schedule JSON...]} measure these, in order
//   {"op": "stop"}                     leave the loop
// and back, one per batch: {"records": [record...]} in the batch's order,
// or {"error": why} when the rank cannot evaluate the workload.
//
//===----------------------------------------------------------------------===//

#include "ke/Distributed/DistributedTuning.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <set>

using namespace mlir;
using namespace ke;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

/// A number JSON can carry: NaN and infinities become null.
static llvm::json::Value finiteOrNull(double value) {
  return std::isfinite(value) ? llvm::json::Value(value)
                              : llvm::json::Value(nullptr);
}

llvm::json::Value ke::candidateRecordToMessage(const CandidateRecord &record) {
  llvm::json::Array seconds;
  for (double s : record.measurement.seconds)
    seconds.push_back(finiteOrNull(s));
  return llvm::json::Object{
      {"error", stringifyErrorClass(record.error)},
      {"message", record.message},
      {"script", record.script},
      {"seconds", std::move(seconds)},
      {"median", finiteOrNull(record.measurement.median)},
      {"relative_error", finiteOrNull(record.relativeError)},
      {"early_stop", record.earlyStop},
      {"measured_by", record.measuredBy}};
}

llvm::Expected<CandidateRecord>
ke::candidateRecordFromMessage(const llvm::json::Value &message,
                               const Schedule &schedule) {
  const llvm::json::Object *o = message.getAsObject();
  if (!o)
    return makeError("a record is not a JSON object");
  std::optional<ErrorClass> error =
      parseErrorClass(o->getString("error").value_or(""));
  const llvm::json::Array *seconds = o->getArray("seconds");
  if (!error || !seconds)
    return makeError("a record lacks its error class or its seconds");
  auto number = [](const llvm::json::Value *v) {
    // null: a NaN or an infinity on the other side (an error that large).
    return v ? v->getAsNumber().value_or(INFINITY) : 0.0;
  };
  CandidateRecord record;
  record.schedule = schedule;
  record.error = *error;
  record.message = o->getString("message").value_or("").str();
  record.script = o->getString("script").value_or("").str();
  for (const llvm::json::Value &s : *seconds)
    record.measurement.seconds.push_back(number(&s));
  record.measurement.median = number(o->get("median"));
  record.relativeError = number(o->get("relative_error"));
  record.earlyStop = o->getBoolean("early_stop").value_or(false);
  record.measuredBy = o->getString("measured_by").value_or("").str();
  return record;
}

//===----------------------------------------------------------------------===//
// Rank 0
//===----------------------------------------------------------------------===//

struct TuningCoordinator::State {
  MpiWorld &world;
  std::string measuredBy;
  bool stopped = false;
  /// What each rank said it cannot do, said on stderr once (a rank without
  /// a device says so for every workload).
  std::set<std::pair<int, std::string>> reported;

  /// Sends `message` to rank `rank`; a rank that cannot be reached ends
  /// the run (the launcher then ends every rank).
  void sendOrAbort(int rank, const llvm::json::Value &message) {
    std::string text;
    llvm::raw_string_ostream(text) << message;
    if (llvm::Error error = world.send(rank, text)) {
      llvm::errs() << "ke-opt tune: " << llvm::toString(std::move(error))
                   << "; ending the run\n";
      world.abort(1);
    }
  }
};

namespace {

/// Rank 0's evaluator of one workload: its own evaluator for its share of
/// each batch, the serving ranks for theirs.
class DistributedEvaluator final : public Evaluator {
public:
  DistributedEvaluator(std::shared_ptr<TuningCoordinator::State> state,
                       unsigned workload, std::unique_ptr<Evaluator> local,
                       const EvaluatorOptions &options)
      : state(std::move(state)), workload(workload), local(std::move(local)),
        options(options), usable(this->state->world.getSize(), true) {}

  Operation *getKernelAnchor() const override {
    return local->getKernelAnchor();
  }
  CandidateRecord evaluate(const Schedule &schedule,
                           std::optional<double> bestSeconds) override {
    CandidateRecord record = local->evaluate(schedule, bestSeconds);
    record.measuredBy = state->measuredBy;
    return record;
  }
  CandidateRecord evaluateReference() override {
    CandidateRecord record = local->evaluateReference();
    record.measuredBy = state->measuredBy;
    return record;
  }
  void evaluateBatch(llvm::ArrayRef<Schedule> schedules, BestFn bestSeconds,
                     RecordFn onRecord) override;

private:
  /// The serving ranks' answer to the share [begin, end) sent to `rank`:
  /// their records to `onRecord`, or false when the rank cannot evaluate
  /// this workload (it is not asked again).
  bool collectShare(int rank, llvm::ArrayRef<Schedule> schedules,
                    unsigned begin, unsigned end, RecordFn onRecord);

  std::shared_ptr<TuningCoordinator::State> state;
  unsigned workload;
  std::unique_ptr<Evaluator> local;
  EvaluatorOptions options;
  /// Ranks that evaluate this workload (rank 0 always does).
  std::vector<bool> usable;
};

} // namespace

void DistributedEvaluator::evaluateBatch(llvm::ArrayRef<Schedule> schedules,
                                         BestFn bestSeconds,
                                         RecordFn onRecord) {
  std::vector<int> ranks;
  for (int rank = 0; rank < int(usable.size()); ++rank)
    if (usable[rank])
      ranks.push_back(rank);
  unsigned n = schedules.size(), shares = std::min<unsigned>(ranks.size(), n);
  if (shares <= 1) {
    local->evaluateBatch(schedules, bestSeconds,
                         [&](unsigned index, CandidateRecord record) {
                           record.measuredBy = state->measuredBy;
                           onRecord(index, std::move(record));
                         });
    return;
  }
  // Contiguous shares as even as can be; rank 0 measures the first.
  std::vector<unsigned> begins;
  for (unsigned share = 0, begin = 0; share <= shares; ++share) {
    begins.push_back(begin);
    begin += n / shares + (share < n % shares ? 1 : 0);
  }
  std::optional<double> best = bestSeconds();
  for (unsigned share = 1; share < shares; ++share) {
    llvm::json::Array sent;
    for (unsigned i = begins[share]; i < begins[share + 1]; ++i)
      sent.push_back(schedules[i].toJSON());
    state->sendOrAbort(ranks[share],
                       llvm::json::Object{{"op", "batch"},
                                          {"workload", workload},
                                          {"best", best ? llvm::json::Value(*best)
                                                        : nullptr},
                                          {"schedules", std::move(sent)}});
  }
  local->evaluateBatch(schedules.take_front(begins[1]), bestSeconds,
                       [&](unsigned index, CandidateRecord record) {
                         record.measuredBy = state->measuredBy;
                         onRecord(index, std::move(record));
                       });
  for (unsigned share = 1; share < shares; ++share) {
    unsigned begin = begins[share], end = begins[share + 1];
    if (collectShare(ranks[share], schedules, begin, end, onRecord))
      continue;
    // That rank cannot evaluate the workload: rank 0 measures its share.
    local->evaluateBatch(schedules.slice(begin, end - begin), bestSeconds,
                         [&](unsigned index, CandidateRecord record) {
                           record.measuredBy = state->measuredBy;
                           onRecord(begin + index, std::move(record));
                         });
  }
}

bool DistributedEvaluator::collectShare(int rank,
                                        llvm::ArrayRef<Schedule> schedules,
                                        unsigned begin, unsigned end,
                                        RecordFn onRecord) {
  // Each candidate's children are killed after their timeouts, so a rank
  // silent for much longer than its share's worst case is stuck; its first
  // share of a workload also waits for its reference.
  double patience = 600 + (end - begin) * 3 * options.timeoutSeconds;
  auto fail = [&](const llvm::Twine &why) {
    llvm::errs() << "ke-opt tune: rank " << rank << ": " << why
                 << "; ending the run (every record measured so far is in "
                    "the database)\n";
    state->world.abort(1);
  };
  llvm::Expected<std::optional<MpiMessage>> received =
      state->world.receive(rank, patience);
  if (!received)
    fail(llvm::toString(received.takeError()));
  if (!*received)
    fail(llvm::formatv("no answer in {0} s", patience));
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse((*received)->text);
  const llvm::json::Object *answer = parsed ? parsed->getAsObject() : nullptr;
  if (!answer) {
    if (!parsed)
      llvm::consumeError(parsed.takeError());
    fail("an answer that is not a JSON object");
  }
  if (std::optional<llvm::StringRef> why = answer->getString("error")) {
    if (state->reported.insert({rank, why->str()}).second)
      llvm::errs() << "ke-opt tune: rank " << rank
                   << " cannot evaluate this workload (" << *why
                   << "); rank 0 measures its share\n";
    usable[rank] = false;
    return false;
  }
  const llvm::json::Array *records = answer->getArray("records");
  if (!records || records->size() != end - begin)
    fail("an answer without one record per candidate");
  for (unsigned i = begin; i < end; ++i) {
    llvm::Expected<CandidateRecord> record =
        candidateRecordFromMessage((*records)[i - begin], schedules[i]);
    if (!record)
      fail(llvm::toString(record.takeError()));
    onRecord(i, std::move(*record));
  }
  return true;
}

TuningCoordinator::TuningCoordinator(MpiWorld &world, std::string measuredBy)
    : state(std::make_shared<State>(State{world, std::move(measuredBy)})) {}

TuningCoordinator::~TuningCoordinator() { stop(); }

void TuningCoordinator::setMeasuredBy(std::string measuredBy) {
  state->measuredBy = std::move(measuredBy);
}

void TuningCoordinator::stop() {
  if (state->stopped)
    return;
  state->stopped = true;
  for (int rank = 1; rank < state->world.getSize(); ++rank)
    state->sendOrAbort(rank, llvm::json::Object{{"op", "stop"}});
}

EvaluatorFactory TuningCoordinator::getEvaluatorFactory() {
  std::shared_ptr<State> shared = state;
  return [shared](unsigned workload, Operation *anchor,
                  const TargetDescription &target,
                  const EvaluatorOptions &options)
             -> FailureOr<std::unique_ptr<Evaluator>> {
    // The serving ranks run their references while rank 0 runs its own
    // (told first: a workload rank 0 then skips costs them only that).
    for (int rank = 1; rank < shared->world.getSize(); ++rank)
      shared->sendOrAbort(
          rank, llvm::json::Object{{"op", "prepare"}, {"workload", workload}});
    FailureOr<std::unique_ptr<Evaluator>> local =
        createEvaluator(anchor, target, options);
    if (failed(local))
      return failure();
    return std::unique_ptr<Evaluator>(std::make_unique<DistributedEvaluator>(
        shared, workload, std::move(*local), options));
  };
}

//===----------------------------------------------------------------------===//
// Serving ranks
//===----------------------------------------------------------------------===//

namespace {

/// A serving rank's evaluator of one workload, or why it has none.
struct ServedWorkload {
  std::unique_ptr<Evaluator> evaluator;
  std::string error;
};

ServedWorkload prepareServed(llvm::ArrayRef<Workload> workloads,
                             unsigned index, const TargetDescription &target,
                             const TuneOptions &options,
                             const ServingRank &self) {
  ServedWorkload served;
  if (!self.setupError.empty()) {
    served.error = self.setupError;
    return served;
  }
  if (index >= workloads.size()) {
    served.error = llvm::formatv("no workload #{0} here: the ranks' inputs "
                                 "differ",
                                 index);
    return served;
  }
  const Workload &workload = workloads[index];
  Operation *anchor = getTuningAnchor(workload, target);
  if (!anchor) {
    served.error = "workload " + workload.key + " has no kernel of its own here";
    return served;
  }
  std::string reason;
  ScopedDiagnosticHandler handler(anchor->getContext(), [&](Diagnostic &diag) {
    if (reason.empty())
      reason = diag.str();
    return success();
  });
  FailureOr<std::unique_ptr<Evaluator>> created = createEvaluator(
      anchor, target,
      getTuningEvaluatorOptions(workload, target, options, workloads.size()));
  if (failed(created))
    served.error = reason.empty() ? "cannot be evaluated" : reason;
  else
    served.evaluator = std::move(*created);
  return served;
}

/// The answer to one batch message.
llvm::json::Value serveBatch(ServedWorkload &served,
                             const llvm::json::Object &request,
                             const TargetDescription &target,
                             const ServingRank &self) {
  if (!served.evaluator)
    return llvm::json::Object{{"error", served.error}};
  const llvm::json::Array *sent = request.getArray("schedules");
  if (!sent)
    return llvm::json::Object{{"error", "a batch without schedules"}};
  std::vector<Schedule> schedules;
  for (const llvm::json::Value &value : *sent) {
    llvm::Expected<Schedule> schedule = scheduleFromJSON(
        value, served.evaluator->getKernelAnchor(), target);
    if (!schedule)
      return llvm::json::Object{
          {"error", "a schedule this rank cannot rebuild (" +
                        llvm::toString(schedule.takeError()) + ")"}};
    schedules.push_back(std::move(*schedule));
  }
  // The best time when the batch was sent, then this share's own.
  std::optional<double> best = request.getNumber("best");
  llvm::json::Array records;
  served.evaluator->evaluateBatch(
      schedules, [&] { return best; },
      [&](unsigned, CandidateRecord record) {
        if (record.isValid() && (!best || record.measurement.median < *best))
          best = record.measurement.median;
        record.measuredBy = self.measuredBy;
        records.push_back(candidateRecordToMessage(record));
      });
  return llvm::json::Object{{"records", std::move(records)}};
}

} // namespace

llvm::Error ke::serveTuning(MpiWorld &world, llvm::ArrayRef<Workload> workloads,
                            const TargetDescription &target,
                            const TuneOptions &options,
                            const ServingRank &self) {
  llvm::DenseMap<unsigned, ServedWorkload> served;
  while (true) {
    llvm::Expected<std::optional<MpiMessage>> received = world.receive(0);
    if (!received)
      return received.takeError();
    llvm::Expected<llvm::json::Value> parsed =
        llvm::json::parse((*received)->text);
    if (!parsed)
      return parsed.takeError();
    const llvm::json::Object *request = parsed->getAsObject();
    llvm::StringRef op =
        request ? request->getString("op").value_or("") : "";
    if (op == "stop")
      return llvm::Error::success();
    std::optional<int64_t> workload =
        request ? request->getInteger("workload") : std::nullopt;
    if (!workload || *workload < 0)
      return makeError("rank 0 sent a message without a workload: " +
                       (*received)->text);
    if (op == "prepare") {
      served[*workload] =
          prepareServed(workloads, *workload, target, options, self);
      continue;
    }
    if (op != "batch")
      return makeError("rank 0 sent an unknown message: " +
                       (*received)->text);
    ServedWorkload &workloadServed = served[*workload];
    if (!workloadServed.evaluator && workloadServed.error.empty())
      workloadServed.error = "rank 0 sent a batch before its workload";
    std::string answer;
    llvm::raw_string_ostream(answer)
        << serveBatch(workloadServed, *request, target, self);
    if (llvm::Error error = world.send(0, answer))
      return error;
  }
}

//===- DistributedTuning.cpp - Tuning with the ranks of an mpirun ---------===//
//
// The messages, all JSON objects from rank 0 to a serving rank:
//   {"op": "prepare", "workload": i}  make workload i's evaluator
//   {"op": "batch", "workload": i, "best": seconds|null,
//    "schedules": [schedule JSON...]} measure these, in order
//   {"op": "stop"}                     leave the loop
// and back, one per batch: {"records": [record...]} in the batch's order,
// or {"error": why} when the rank cannot evaluate the workload. Rank 0's
// child (the concurrent phase's server of rank 0's own device) takes the
// same batch messages through a pipe (ServingChild) and gives the same
// answers.
//
//===----------------------------------------------------------------------===//

#include "ke/Distributed/DistributedTuning.h"

#include "ke/Measure/GpuEvaluator.h"
#include "ke/Runtime/ServingChild.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>
#include <set>
#include <thread>

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

/// The answer to one batch message: the records of `evaluator` (measured
/// by `measuredBy`) or, without one, `error`.
static llvm::json::Value serveBatch(Evaluator *evaluator,
                                    llvm::StringRef error,
                                    const llvm::json::Object &request,
                                    const TargetDescription &target,
                                    llvm::StringRef measuredBy) {
  if (!evaluator)
    return llvm::json::Object{{"error", error}};
  const llvm::json::Array *sent = request.getArray("schedules");
  if (!sent)
    return llvm::json::Object{{"error", "a batch without schedules"}};
  std::vector<Schedule> schedules;
  for (const llvm::json::Value &value : *sent) {
    llvm::Expected<Schedule> schedule =
        scheduleFromJSON(value, evaluator->getKernelAnchor(), target);
    if (!schedule)
      return llvm::json::Object{
          {"error", "a schedule this rank cannot rebuild (" +
                        llvm::toString(schedule.takeError()) + ")"}};
    schedules.push_back(std::move(*schedule));
  }
  // The best time when the batch was sent, then this share's own.
  std::optional<double> best = request.getNumber("best");
  llvm::json::Array records;
  evaluator->evaluateBatch(
      schedules, [&] { return best; },
      [&](unsigned, CandidateRecord record) {
        if (record.isValid() && (!best || record.measurement.median < *best))
          best = record.measurement.median;
        record.measuredBy = measuredBy.str();
        records.push_back(candidateRecordToMessage(record));
      });
  return llvm::json::Object{{"records", std::move(records)}};
}

//===----------------------------------------------------------------------===//
// Rank 0
//===----------------------------------------------------------------------===//

/// The state of rank 0's side. In the search's concurrent phase
/// (ConcurrentRounds: begin() to end()) every device is a "server" that
/// measures one share of a batch at a time: rank 0's own device through a
/// child forked at begin() that holds rank 0's evaluators (`local`), each
/// other rank's through MPI. Rounds post their shares and wait on
/// `changed`; wait(), on the tuner's own thread (the only one that calls
/// MPI), sends them and collects the answers, and a thread of rank 0's
/// talks to its child.
struct TuningCoordinator::State final : ConcurrentRounds {
  State(MpiWorld *world, std::string measuredBy)
      : world(world), measuredBy(std::move(measuredBy)),
        servers(world ? world->getSize() : 1) {}

  /// Null in a run of one process.
  MpiWorld *world;
  std::string measuredBy;
  bool stopped = false;
  /// What each rank said it cannot do, said on stderr once (a rank without
  /// a device says so for every workload).
  std::set<std::pair<int, std::string>> reported;

  /// Rank 0's own evaluator of each workload, and its target: what the
  /// child forked at begin() measures with.
  struct Local {
    Evaluator *evaluator;
    TargetDescription target;
  };
  llvm::DenseMap<unsigned, Local> locals;

  /// One device of the concurrent phase, by rank (0: rank 0's child).
  struct Server {
    bool busy = false;
    /// The share to measure, until it is sent.
    std::optional<std::string> request;
    std::optional<std::string> answer;
    std::chrono::steady_clock::time_point sentAt;
    double patience = 0;
  };
  std::vector<Server> servers;
  /// Between begin() and end().
  bool concurrent = false;
  /// Batches whose shares are being measured.
  unsigned batchesOut = 0;
  std::unique_ptr<ServingChild> localServer;
  std::thread localThread;
  bool ending = false;
  /// Why the run must end, set by a round; wait() ends it.
  std::string fatal;

  /// Sends `message` to rank `rank`; a rank that cannot be reached ends
  /// the run (the launcher then ends every rank).
  void sendOrAbort(int rank, const llvm::json::Value &message) {
    std::string text;
    llvm::raw_string_ostream(text) << message;
    if (llvm::Error error = world->send(rank, text))
      endRun(llvm::toString(std::move(error)));
  }
  int getNumRanks() const { return world ? world->getSize() : 1; }
  /// Ends the run with `why` on stderr: all ranks through the launcher, or
  /// this process. Every record measured so far is in the database (each
  /// is written as it comes).
  [[noreturn]] void endRun(const llvm::Twine &why) {
    llvm::errs() << "ke-opt tune: " << why
                 << "; ending the run (every record measured so far is in "
                    "the database)\n";
    llvm::errs().flush();
    if (world)
      world->abort(1);
    std::_Exit(1);
  }

  /// One more round than devices: while every device measures, the next
  /// round is searched and ready for the first one that is free.
  unsigned getMaxRounds() const override { return servers.size() + 1; }
  bool begin() override;
  void wait(std::unique_lock<std::mutex> &baton) override;
  void end() override;

  /// In rank 0's child (forked by begin()): answers one batch message
  /// with rank 0's evaluator of its workload.
  void serveLocally(llvm::StringRef request, llvm::raw_ostream &report);
  /// The thread that hands server 0's shares to rank 0's child and takes
  /// its answers, from begin() to end().
  void talkToLocalServer();
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
        options(options), usable(this->state->getNumRanks(), true) {}

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
  /// The concurrent phase's evaluateBatch, on a round's thread holding the
  /// baton: the batch's shares go to free servers, as many as the batch
  /// deserves (every free one when no other round will want one soon).
  void evaluateConcurrently(llvm::ArrayRef<Schedule> schedules,
                            BestFn bestSeconds, RecordFn onRecord);
  /// The batch message of schedules [begin, end).
  std::string makeBatchMessage(llvm::ArrayRef<Schedule> schedules,
                               unsigned begin, unsigned end,
                               std::optional<double> best) const;
  /// How long rank 0 waits for a share of `count` candidates: each
  /// candidate's children are killed after their timeouts, so a rank
  /// silent for much longer is stuck; its first share of a workload also
  /// waits for its reference.
  double getPatience(unsigned count) const {
    return 600 + count * 3 * options.timeoutSeconds;
  }
  /// Reads `rank`'s answer to the share [begin, end): its records to
  /// `onRecord`, or false when the rank cannot evaluate this workload (it
  /// is not asked again). A malformed answer is `fail`ed.
  bool readShare(int rank, llvm::StringRef text,
                 llvm::ArrayRef<Schedule> schedules, unsigned begin,
                 unsigned end, RecordFn onRecord,
                 llvm::function_ref<void(const llvm::Twine &)> fail);
  /// Before the concurrent phase: receives `rank`'s answer and reads it.
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

std::string
DistributedEvaluator::makeBatchMessage(llvm::ArrayRef<Schedule> schedules,
                                       unsigned begin, unsigned end,
                                       std::optional<double> best) const {
  llvm::json::Array sent;
  for (unsigned i = begin; i < end; ++i)
    sent.push_back(schedules[i].toJSON());
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(llvm::json::Object{
      {"op", "batch"},
      {"workload", workload},
      {"best", best ? llvm::json::Value(*best) : nullptr},
      {"schedules", std::move(sent)}});
  return text;
}

/// Contiguous shares of `n` items as even as can be: share i is
/// [begins[i], begins[i + 1]).
static std::vector<unsigned> splitEvenly(unsigned n, unsigned shares) {
  std::vector<unsigned> begins;
  for (unsigned share = 0, begin = 0; share <= shares; ++share) {
    begins.push_back(begin);
    begin += n / shares + (share < n % shares ? 1 : 0);
  }
  return begins;
}

void DistributedEvaluator::evaluateBatch(llvm::ArrayRef<Schedule> schedules,
                                         BestFn bestSeconds,
                                         RecordFn onRecord) {
  if (state->concurrent)
    return evaluateConcurrently(schedules, bestSeconds, onRecord);
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
  // Rank 0 measures the first share.
  std::vector<unsigned> begins = splitEvenly(n, shares);
  std::optional<double> best = bestSeconds();
  for (unsigned share = 1; share < shares; ++share) {
    if (llvm::Error error = state->world->send(
            ranks[share], makeBatchMessage(schedules, begins[share],
                                           begins[share + 1], best)))
      state->endRun(llvm::toString(std::move(error)));
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

void DistributedEvaluator::evaluateConcurrently(
    llvm::ArrayRef<Schedule> schedules, BestFn bestSeconds,
    RecordFn onRecord) {
  TuningCoordinator::State &s = *state;
  // The round's thread holds the baton; it lets go only while it waits.
  std::unique_lock<std::mutex> lock(s.baton, std::adopt_lock);
  llvm::scope_exit stillHeld([&] { lock.release(); });
  auto fail = [&](const llvm::Twine &why) {
    s.fatal = why.str();
    s.changed.notify_all();
    // wait() ends the run.
    s.changed.wait(lock, [] { return false; });
  };
  unsigned n = schedules.size();
  if (!n)
    return;
  auto freeRanks = [&] {
    std::vector<int> ranks;
    for (int rank = 0; rank < int(s.servers.size()); ++rank)
      if (usable[rank] && !s.servers[rank].busy)
        ranks.push_back(rank);
    return ranks;
  };
  std::vector<int> ranks;
  s.changed.wait(lock, [&] { return !(ranks = freeRanks()).empty(); });
  // The free devices are shared with the rounds that will want one soon:
  // those in flight without a batch out (this one aside).
  unsigned waiting = s.getRoundsInFlight() > s.batchesOut + 1
                         ? s.getRoundsInFlight() - s.batchesOut - 1
                         : 0;
  unsigned wanted = (ranks.size() + waiting) / (waiting + 1);
  ranks.resize(std::min<size_t>({ranks.size(), wanted, n}));
  ++s.batchesOut;
  std::vector<unsigned> begins = splitEvenly(n, ranks.size());
  std::optional<double> best = bestSeconds();
  auto post = [&](int rank, unsigned begin, unsigned end) {
    TuningCoordinator::State::Server &server = s.servers[rank];
    server.busy = true;
    server.request = makeBatchMessage(schedules, begin, end, best);
    server.answer.reset();
    server.patience = getPatience(end - begin);
  };
  for (unsigned share = 0; share < ranks.size(); ++share)
    post(ranks[share], begins[share], begins[share + 1]);
  s.changed.notify_all();
  std::vector<std::string> answers(ranks.size());
  s.changed.wait(lock, [&] {
    return llvm::all_of(ranks,
                        [&](int rank) { return s.servers[rank].answer; });
  });
  for (unsigned share = 0; share < ranks.size(); ++share) {
    answers[share] = std::move(*s.servers[ranks[share]].answer);
    s.servers[ranks[share]] = {};
  }
  --s.batchesOut;
  s.changed.notify_all();
  for (unsigned share = 0; share < ranks.size(); ++share) {
    unsigned begin = begins[share], end = begins[share + 1];
    if (readShare(ranks[share], answers[share], schedules, begin, end,
                  onRecord, fail))
      continue;
    // That rank cannot evaluate the workload: rank 0's child measures its
    // share (rank 0 prepared the workload, so its child can).
    s.changed.wait(lock, [&] { return !s.servers[0].busy; });
    post(0, begin, end);
    s.changed.notify_all();
    s.changed.wait(lock, [&] { return bool(s.servers[0].answer); });
    std::string answer = std::move(*s.servers[0].answer);
    s.servers[0] = {};
    s.changed.notify_all();
    if (!readShare(0, answer, schedules, begin, end, onRecord, fail))
      fail("rank 0 cannot evaluate a workload it prepared");
  }
}

bool DistributedEvaluator::collectShare(int rank,
                                        llvm::ArrayRef<Schedule> schedules,
                                        unsigned begin, unsigned end,
                                        RecordFn onRecord) {
  auto fail = [&](const llvm::Twine &why) { state->endRun(why); };
  double patience = getPatience(end - begin);
  llvm::Expected<std::optional<MpiMessage>> received =
      state->world->receive(rank, patience);
  if (!received)
    fail("rank " + llvm::Twine(rank) + ": " +
         llvm::toString(received.takeError()));
  if (!*received)
    fail(llvm::formatv("rank {0}: no answer in {1} s", rank, patience));
  return readShare(rank, (*received)->text, schedules, begin, end, onRecord,
                   fail);
}

bool DistributedEvaluator::readShare(
    int rank, llvm::StringRef text, llvm::ArrayRef<Schedule> schedules,
    unsigned begin, unsigned end, RecordFn onRecord,
    llvm::function_ref<void(const llvm::Twine &)> fail) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  const llvm::json::Object *answer = parsed ? parsed->getAsObject() : nullptr;
  if (!answer) {
    if (!parsed)
      llvm::consumeError(parsed.takeError());
    fail("rank " + llvm::Twine(rank) + ": an answer that is not a JSON object");
    return false;
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
  if (!records || records->size() != end - begin) {
    fail("rank " + llvm::Twine(rank) +
         ": an answer without one record per candidate");
    return false;
  }
  for (unsigned i = begin; i < end; ++i) {
    llvm::Expected<CandidateRecord> record =
        candidateRecordFromMessage((*records)[i - begin], schedules[i]);
    if (!record) {
      fail("rank " + llvm::Twine(rank) + ": " +
           llvm::toString(record.takeError()));
      return false;
    }
    // Rank 0's child names rank 0, as rank 0 itself does.
    onRecord(i, std::move(*record));
  }
  return true;
}

TuningCoordinator::TuningCoordinator(MpiWorld *world, std::string measuredBy)
    : state(std::make_shared<State>(world, std::move(measuredBy))) {}

TuningCoordinator::~TuningCoordinator() { stop(); }

void TuningCoordinator::setMeasuredBy(std::string measuredBy) {
  state->measuredBy = std::move(measuredBy);
}

ConcurrentRounds *TuningCoordinator::getConcurrentRounds() {
  return state.get();
}

void TuningCoordinator::stop() {
  if (state->stopped)
    return;
  state->stopped = true;
  for (int rank = 1; rank < state->getNumRanks(); ++rank)
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
    for (int rank = 1; rank < shared->getNumRanks(); ++rank)
      shared->sendOrAbort(
          rank, llvm::json::Object{{"op", "prepare"}, {"workload", workload}});
    FailureOr<std::unique_ptr<Evaluator>> local =
        createEvaluator(anchor, target, options);
    if (failed(local))
      return failure();
    shared->locals[workload] = {local->get(), target};
    return std::unique_ptr<Evaluator>(std::make_unique<DistributedEvaluator>(
        shared, workload, std::move(*local), options));
  };
}

bool TuningCoordinator::State::begin() {
  // Rank 0's measurements move to a child that holds its evaluators as
  // they are now (references, input sets); the measuring servers are
  // children of this process, which that child could not share.
  GpuEvaluator::stopMeasuringServers();
  localServer = std::make_unique<ServingChild>(
      [this](llvm::StringRef request, llvm::raw_ostream &report) {
        serveLocally(request, report);
        return true;
      });
  if (!localServer->ensureStarted()) {
    localServer.reset();
    return false;
  }
  concurrent = true;
  ending = false;
  localThread = std::thread([this] { talkToLocalServer(); });
  return true;
}

void TuningCoordinator::State::talkToLocalServer() {
  std::unique_lock<std::mutex> lock(baton);
  while (true) {
    changed.wait(lock, [&] { return ending || servers[0].request; });
    if (ending)
      return;
    std::string request = std::move(*servers[0].request);
    servers[0].request.reset();
    double patience = servers[0].patience;
    // A child that ended is forked again with the baton held, so that no
    // round is in the middle of the search's data when it is copied.
    if (!localServer->ensureStarted()) {
      fatal = "rank 0 cannot fork its measuring process";
      changed.notify_all();
      continue;
    }
    lock.unlock();
    ChildResult result = localServer->call(request, patience);
    lock.lock();
    if (result.status == ChildResult::Status::Exited && result.exitCode == 0)
      servers[0].answer = std::move(result.report);
    else
      fatal = "rank 0's measuring process ended: " + result.describe();
    changed.notify_all();
  }
}

void TuningCoordinator::State::wait(std::unique_lock<std::mutex> &lock) {
  bool moved = false;
  auto now = std::chrono::steady_clock::now();
  for (int rank = 1; rank < int(servers.size()); ++rank) {
    Server &server = servers[rank];
    if (server.request) {
      if (llvm::Error error = world->send(rank, *server.request))
        fatal = "rank " + std::to_string(rank) + ": " +
                llvm::toString(std::move(error));
      server.request.reset();
      server.sentAt = now;
    } else if (server.busy && !server.answer &&
               std::chrono::duration<double>(now - server.sentAt).count() >
                   server.patience) {
      fatal = llvm::formatv("rank {0}: no answer in {1} s", rank,
                            server.patience)
                  .str();
    }
  }
  while (world && fatal.empty()) {
    llvm::Expected<std::optional<MpiMessage>> received =
        world->receive(-1, /*timeoutSeconds=*/0.0);
    if (!received) {
      fatal = llvm::toString(received.takeError());
      break;
    }
    if (!*received)
      break;
    int rank = (*received)->source;
    if (rank <= 0 || rank >= int(servers.size()) || !servers[rank].busy ||
        servers[rank].answer) {
      fatal = "rank " + std::to_string(rank) + " sent an answer to no share";
      break;
    }
    servers[rank].answer = std::move((*received)->text);
    moved = true;
  }
  if (!fatal.empty())
    endRun(fatal);
  if (moved)
    changed.notify_all();
  changed.wait_for(lock, std::chrono::milliseconds(2));
}

void TuningCoordinator::State::end() {
  if (!concurrent)
    return;
  ending = true;
  changed.notify_all();
  // The thread needs the baton to see `ending`.
  std::unique_lock<std::mutex> lock(baton, std::adopt_lock);
  lock.unlock();
  localThread.join();
  lock.lock();
  lock.release();
  localServer.reset();
  concurrent = false;
}

void TuningCoordinator::State::serveLocally(llvm::StringRef request,
                                            llvm::raw_ostream &report) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(request);
  const llvm::json::Object *o = parsed ? parsed->getAsObject() : nullptr;
  if (!parsed)
    llvm::consumeError(parsed.takeError());
  std::optional<int64_t> workload = o ? o->getInteger("workload") : std::nullopt;
  auto it = workload ? locals.find(unsigned(*workload)) : locals.end();
  if (it == locals.end()) {
    report << llvm::json::Value(
        llvm::json::Object{{"error", "rank 0 has no such workload"}});
    return;
  }
  report << serveBatch(it->second.evaluator, "", *o, it->second.target,
                       measuredBy);
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
        << serveBatch(workloadServed.evaluator.get(), workloadServed.error,
                      *request, target, self.measuredBy);
    if (llvm::Error error = world.send(0, answer))
      return error;
  }
}

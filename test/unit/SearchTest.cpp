//===- SearchTest.cpp - Explorer, droplet, task scheduler, statistics -----===//
//
// The searches run against a synthetic, noise-free "measurement" (a time that
// is a function of the knob indices), so their behaviour and determinism can
// be checked exactly and fast.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "ke/Search/Droplet.h"
#include "ke/Search/ExploreThenDroplet.h"
#include "ke/Search/FinalCheck.h"
#include "ke/Search/Proposer.h"
#include "ke/Search/Explorer.h"
#include "ke/Search/Statistics.h"
#include "ke/Search/TaskScheduler.h"
#include "ke/Workload/Kernel.h"

#include "llvm/ADT/StringSet.h"

#include <map>

using namespace ke;
using ke::testing::IRTest;

TEST(WelchTest, SeparatesClearlyDifferentSamples) {
  std::vector<double> fast = {1.00, 1.01, 0.99, 1.00, 1.02};
  std::vector<double> slow = {1.20, 1.21, 1.19, 1.22, 1.18};
  EXPECT_LT(welchLessPValue(fast, slow), 0.001);
  EXPECT_GT(welchLessPValue(slow, fast), 0.999);
}

TEST(WelchTest, OverlappingSamplesAreNotSignificant) {
  std::vector<double> a = {1.00, 1.10, 0.90, 1.05, 0.95};
  std::vector<double> b = {1.02, 1.12, 0.92, 1.07, 0.97};
  double p = welchLessPValue(a, b);
  EXPECT_GT(p, 0.05);
  EXPECT_LT(p, 0.5); // a is a little faster on average
}

TEST(WelchTest, TooFewValuesProveNothing) {
  EXPECT_EQ(welchLessPValue({1.0}, {2.0, 2.1}), 1.0);
  EXPECT_EQ(welchLessPValue({1.0, 1.0}, {2.0, 2.0}), 0.0);
  EXPECT_EQ(welchLessPValue({2.0, 2.0}, {1.0, 1.0}), 1.0);
}

TEST(TaskSchedulerTest, WarmsUpThenFollowsTheGradient) {
  TaskSchedulerOptions options;
  options.epsGreedy = 0;
  TaskScheduler scheduler({1.0, 10.0}, /*seed=*/1, options);
  // Every task gets its first round before any gradient is used.
  std::optional<unsigned> first = scheduler.pick();
  ASSERT_TRUE(first);
  scheduler.update(*first, 1.0);
  std::optional<unsigned> second = scheduler.pick();
  ASSERT_TRUE(second);
  EXPECT_NE(*first, *second);
  scheduler.update(*second, 1.0);
  // Equal times, but task 1 occurs ten times as often: it weighs more.
  EXPECT_EQ(scheduler.pick(), 1u);
  EXPECT_LT(scheduler.getGradient(1), scheduler.getGradient(0));
  scheduler.markFinished(1);
  EXPECT_EQ(scheduler.pick(), 0u);
  scheduler.markFinished(0);
  EXPECT_FALSE(scheduler.pick());
}

TEST(TaskSchedulerTest, TaskWithoutValidCandidateGoesFirst) {
  TaskSchedulerOptions options;
  options.epsGreedy = 0;
  TaskScheduler scheduler({1.0, 1.0}, 1, options);
  scheduler.update(0, 1.0);
  scheduler.update(1, std::nullopt);
  EXPECT_EQ(scheduler.pick(), 1u);
}

namespace {

class SearchTest : public IRTest {
protected:
  void SetUp() override {
    Workload w = onlyWorkload(R"mlir(
func.func @f(%a: tensor<64x48xf32>, %b: tensor<48x80xf32>, %c: tensor<64x80xf32>) -> tensor<64x80xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x48xf32>, tensor<48x80xf32>) outs(%c : tensor<64x80xf32>) -> tensor<64x80xf32>
  return %r : tensor<64x80xf32>
})mlir");
    mlir::FailureOr<KernelModule> built = buildKernelModule(w.firstOp);
    ASSERT_TRUE(mlir::succeeded(built));
    kernel = std::move(*built);
    anchor = findKernelAnchor(*kernel.module);
    sketches = getCandidateSketches(anchor, host);
    ASSERT_FALSE(sketches.empty());
  }

  /// A deterministic time: a bowl around index 1 of every knob of the first
  /// sketch, slower for the other sketches; repeats spread by 0.1%.
  static CandidateRecord synthetic(const Schedule &s) {
    double t = 1;
    for (unsigned i : s.indices)
      t += 0.1 * (double(i) - 1) * (double(i) - 1);
    if (s.rule->getName() != "cpu.tile")
      t *= 3;
    CandidateRecord r;
    r.schedule = s;
    r.measurement.seconds = {t * 0.999, t, t * 1.001, t};
    r.measurement.median = t;
    return r;
  }

  std::unique_ptr<SearchTask> makeTask(uint64_t seed,
                                       std::vector<std::string> *sequence) {
    auto task = std::make_unique<SearchTask>(
        anchor, host, sketches,
        [this, sequence](const Schedule &s, std::optional<double>) {
          ++calls;
          if (sequence)
            sequence->push_back(getScheduleId(s));
          return synthetic(s);
        },
        seed);
    return task;
  }

  /// Explores `explore` candidates, then runs droplet for `droplet` more.
  std::vector<std::string> runSearch(uint64_t seed, unsigned explore,
                                     unsigned droplet) {
    std::vector<std::string> sequence;
    std::unique_ptr<SearchTask> task = makeTask(seed, &sequence);
    ExplorerOptions options;
    options.populationSize = 256;
    Explorer explorer(*task, createNearestNeighbourCostModel(), options);
    while (task->getNumMeasured() < explore)
      if (!explorer.runRound(explore - task->getNumMeasured()))
        break;
    DropletSearch search(*task);
    unsigned budget = explore + droplet;
    while (task->getNumMeasured() < budget && !search.isFinished())
      if (!search.runRound(budget - task->getNumMeasured()))
        break;
    return sequence;
  }

  TargetDescription host = detectHostTarget();
  KernelModule kernel;
  mlir::Operation *anchor = nullptr;
  llvm::SmallVector<Schedule> sketches;
  unsigned calls = 0;
};

} // namespace

TEST_F(SearchTest, TaskNeverMeasuresTwice) {
  std::unique_ptr<SearchTask> task = makeTask(1, nullptr);
  task->measure(sketches.front(), SearchPhase::Explore);
  task->measure(sketches.front(), SearchPhase::Explore);
  EXPECT_EQ(calls, 1u);
  EXPECT_EQ(task->getNumMeasured(), 1u);
  // A record from the database counts as measured, not as this run's.
  Schedule other = sketches.front();
  other.indices.back() = other.indices.back() == 0 ? 1 : 0;
  task->addRecord(other, synthetic(other));
  task->measure(other, SearchPhase::Explore);
  EXPECT_EQ(calls, 1u);
  EXPECT_EQ(task->getNumPrevious(), 1u);
}

TEST_F(SearchTest, ExplorerProposesDistinctUnmeasuredCandidatesWithinLimits) {
  std::unique_ptr<SearchTask> task = makeTask(3, nullptr);
  ExplorerOptions options;
  options.populationSize = 256;
  Explorer explorer(*task, createNearestNeighbourCostModel(), options);
  EXPECT_EQ(explorer.runRound(64), 64u);
  std::vector<Schedule> proposed = explorer.propose(64);
  EXPECT_EQ(proposed.size(), 64u);
  llvm::StringSet<> ids;
  for (const Schedule &s : proposed) {
    EXPECT_TRUE(ids.insert(getScheduleId(s)).second) << getScheduleId(s);
    EXPECT_FALSE(task->isMeasured(s)) << getScheduleId(s);
    EXPECT_TRUE(task->withinLimits(s)) << getScheduleId(s);
  }
}

TEST_F(SearchTest, ExplorerBeatsItsFirstRandomRound) {
  std::unique_ptr<SearchTask> task = makeTask(5, nullptr);
  ExplorerOptions options;
  options.populationSize = 256;
  options.batchSize = 32;
  Explorer explorer(*task, createNearestNeighbourCostModel(), options);
  explorer.runRound(32);
  double afterRandom = *task->getBestSeconds();
  for (int round = 0; round < 4; ++round)
    explorer.runRound(32);
  EXPECT_LE(*task->getBestSeconds(), afterRandom);
  // The model-guided rounds find better than random candidates on average.
  auto mean = [&](size_t begin, size_t end) {
    double sum = 0;
    for (size_t i = begin; i < end; ++i)
      sum += task->getHistory()[i].record.measurement.median;
    return sum / double(end - begin);
  };
  EXPECT_LT(mean(128, 160), mean(0, 32));
}

TEST_F(SearchTest, DropletDescendsToTheBottomOfTheBowl) {
  std::unique_ptr<SearchTask> task = makeTask(7, nullptr);
  // Start far from the optimum: the last index of every knob.
  Schedule start = sketches.front();
  for (unsigned k = 0; k < start.indices.size(); ++k)
    start.indices[k] = start.space.knobs[k].choices.size() - 1;
  task->addRecord(start, synthetic(start), SearchPhase::Explore);
  double initial = *task->getBestSeconds();
  DropletSearch search(*task);
  for (int round = 0; round < 200 && !search.isFinished(); ++round)
    search.runRound(64);
  EXPECT_TRUE(search.isFinished());
  EXPECT_GT(search.getNumMoves(), 0u);
  EXPECT_LT(*task->getBestSeconds(), initial);
  // Every move was a significant improvement, so the end point is a local
  // minimum of the bowl among the neighbours within limits.
  EXPECT_EQ(task->getBest()->schedule.rule->getName(), "cpu.tile");
}

TEST_F(SearchTest, DropletDoesNotMoveOnNoise) {
  // All candidates take the same time up to noise: no move is significant.
  auto task = std::make_unique<SearchTask>(
      anchor, host, sketches,
      [](const Schedule &s, std::optional<double>) {
        CandidateRecord r;
        r.schedule = s;
        r.measurement.seconds = {1.0, 1.1, 0.9, 1.05};
        r.measurement.median = 1.0 - 1e-6 * s.indices.front();
        return r;
      },
      11);
  task->measure(sketches.front(), SearchPhase::Explore);
  DropletSearch search(*task);
  for (int round = 0; round < 100 && !search.isFinished(); ++round)
    search.runRound(64);
  EXPECT_EQ(search.getNumMoves(), 0u);
  EXPECT_TRUE(search.isFinished());
}

TEST_F(SearchTest, SameSeedSameCandidates) {
  std::vector<std::string> first = runSearch(42, 96, 40);
  std::vector<std::string> second = runSearch(42, 96, 40);
  EXPECT_EQ(first.size(), 136u);
  EXPECT_EQ(first, second);
  std::vector<std::string> other = runSearch(43, 96, 40);
  EXPECT_NE(first, other);
}

/// Options of the default search for the synthetic tasks: `explore`
/// candidates explored in rounds of `batch`, a population of 256.
static ExploreThenDropletOptions searchOptions(unsigned explore,
                                               unsigned batch) {
  ExploreThenDropletOptions options;
  options.explore = explore;
  options.explorer.populationSize = 256;
  options.explorer.batchSize = batch;
  return options;
}

/// Runs the default search on a synthetic task with `budget` trials; returns
/// the trials measured.
static unsigned runDefaultSearch(ExploreThenDroplet &search, SearchTask &task,
                                 unsigned budget) {
  while (task.getNumMeasured() < budget)
    if (!search.runRound(budget - task.getNumMeasured()))
      break;
  return task.getNumMeasured();
}

TEST_F(SearchTest, ConvergedSearchSpendsTheRestOfTheBudget) {
  // The bowl converges after a few droplet rounds; the rest of the budget
  // goes to new exploration and droplet search again (restarts).
  std::unique_ptr<SearchTask> task = makeTask(13, nullptr);
  ExploreThenDropletOptions options = searchOptions(32, 32);
  ExploreThenDroplet search(*task, createNearestNeighbourCostModel(), options);
  EXPECT_EQ(runDefaultSearch(search, *task, 300), 300u);
  EXPECT_GT(search.getNumRestarts(), 0u);
  EXPECT_GT(search.getNumDropletMoves(), 0u);
  EXPECT_TRUE(search.getStopReason().empty());
}

TEST_F(SearchTest, StopWhenConvergedKeepsTheBudget) {
  std::unique_ptr<SearchTask> task = makeTask(13, nullptr);
  ExploreThenDropletOptions options = searchOptions(32, 32);
  options.stopWhenConverged = true;
  ExploreThenDroplet search(*task, createNearestNeighbourCostModel(), options);
  EXPECT_LT(runDefaultSearch(search, *task, 300), 300u);
  EXPECT_EQ(search.getNumRestarts(), 0u);
  EXPECT_EQ(search.getStopReason(), "converged");
}

namespace {

/// A proposer that answers with fixed text, or an error when `fail` is set.
class FixedProposer final : public Proposer {
public:
  explicit FixedProposer(std::string reply, bool fail = false)
      : reply(std::move(reply)), fail(fail) {}
  llvm::Expected<std::string> ask(const llvm::json::Value &request) override {
    requests.push_back(request);
    if (fail)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "unreachable");
    return reply;
  }
  std::string reply;
  bool fail;
  std::vector<llvm::json::Value> requests;
};

} // namespace

/// The JSON of `schedule` as a proposer would write it.
static std::string proposalText(const Schedule &schedule) {
  std::string text;
  llvm::raw_string_ostream(text) << schedule.toJSON();
  return text;
}

TEST_F(SearchTest, ProposalsAreCheckedLikeUserInput) {
  std::unique_ptr<SearchTask> task = makeTask(17, nullptr);
  const Schedule &tile = sketches.front();
  Schedule moved = tile;
  moved.indices.back() = moved.indices.back() == 0 ? 1 : 0;
  Schedule measured = tile;
  task->measure(measured, SearchPhase::Explore);
  std::string reply =
      "Sure:\n```json\n{\"proposals\": [" + proposalText(moved) + ", " +
      proposalText(moved) + ", " + proposalText(measured) +
      R"(, {"sketch": "no.such", "knobs": {}}, {"sketch": ")" +
      tile.rule->getName().str() + R"(", "knobs": {"nope": 1}}]}
```)";
  ProposerStats stats;
  llvm::Expected<std::vector<Schedule>> accepted =
      parseProposals(reply, *task, 8, stats);
  ASSERT_TRUE(bool(accepted)) << llvm::toString(accepted.takeError());
  ASSERT_EQ(accepted->size(), 1u);
  EXPECT_EQ(getScheduleId(accepted->front()), getScheduleId(moved));
  EXPECT_EQ(stats.proposed, 5u);
  EXPECT_EQ(stats.accepted, 1u);
  EXPECT_EQ(stats.rejected, 4u);
  ASSERT_EQ(stats.messages.size(), 4u);
  EXPECT_NE(stats.messages[0].find("measured already"), std::string::npos);
  EXPECT_NE(stats.messages[2].find("unknown sketch"), std::string::npos);

  // More than asked for: the rest is rejected. Not JSON: an error.
  ProposerStats few;
  llvm::Expected<std::vector<Schedule>> one = parseProposals(
      "[" + proposalText(moved) + "," + proposalText(sketches.back()) + "]",
      *task, 1, few);
  ASSERT_TRUE(bool(one));
  EXPECT_EQ(one->size(), 1u);
  EXPECT_EQ(few.rejected, 1u);
  llvm::Expected<std::vector<Schedule>> prose =
      parseProposals("a tile of 32, I think", *task, 8, few);
  EXPECT_FALSE(bool(prose));
  llvm::consumeError(prose.takeError());
}

TEST_F(SearchTest, ProposalsAreMeasuredInExplorationRounds) {
  std::unique_ptr<SearchTask> task = makeTask(19, nullptr);
  Schedule moved = sketches.front();
  moved.indices.back() = moved.indices.back() == 0 ? 1 : 0;
  FixedProposer proposer("[" + proposalText(moved) + "]");
  ProposerStats stats;
  ExploreThenDropletOptions options = searchOptions(16, 8);
  options.proposer = &proposer;
  options.proposalsPerRound = 4;
  options.proposerStats = &stats;
  ExploreThenDroplet search(*task, createNearestNeighbourCostModel(), options);
  EXPECT_EQ(search.runRound(8), 8u);
  ASSERT_EQ(proposer.requests.size(), 1u);
  const llvm::json::Object *request = proposer.requests[0].getAsObject();
  ASSERT_TRUE(request);
  EXPECT_EQ(request->getInteger("count"), 4);
  EXPECT_EQ(request->getString("op"), "linalg.matmul");
  EXPECT_EQ(task->countPhase(SearchPhase::Proposed), 1u);
  EXPECT_EQ(task->countPhase(SearchPhase::Explore), 7u);
  const MeasuredCandidate *c = task->find(moved);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->phase, SearchPhase::Proposed);
  // The second round proposes it again: rejected as measured.
  search.runRound(8);
  EXPECT_EQ(stats.calls, 2u);
  EXPECT_EQ(stats.accepted, 1u);
  EXPECT_EQ(stats.rejected, 1u);
}

TEST_F(SearchTest, FailingProposerCostsNoTrials) {
  std::unique_ptr<SearchTask> task = makeTask(23, nullptr);
  FixedProposer proposer("", /*fail=*/true);
  ProposerStats stats;
  ExploreThenDropletOptions options = searchOptions(32, 16);
  options.proposer = &proposer;
  options.proposerStats = &stats;
  ExploreThenDroplet search(*task, createNearestNeighbourCostModel(), options);
  EXPECT_EQ(runDefaultSearch(search, *task, 100), 100u);
  EXPECT_GT(stats.calls, 1u);
  EXPECT_EQ(stats.failedCalls, stats.calls);
  ASSERT_FALSE(stats.messages.empty());
  EXPECT_EQ(stats.messages.front(), "unreachable");
  EXPECT_EQ(task->countPhase(SearchPhase::Proposed), 0u);
}

TEST_F(SearchTest, BatchesMeasureEachNewScheduleOnceInOrder) {
  std::unique_ptr<SearchTask> task = makeTask(29, nullptr);
  std::vector<std::vector<std::string>> batches;
  std::vector<std::optional<double>> bests;
  task->setBatchMeasure(
      [&](llvm::ArrayRef<Schedule> schedules,
          llvm::function_ref<std::optional<double>()> best,
          llvm::function_ref<void(unsigned, CandidateRecord)> onRecord) {
        batches.emplace_back();
        for (auto [index, s] : llvm::enumerate(schedules)) {
          batches.back().push_back(getScheduleId(s));
          bests.push_back(best());
          onRecord(index, synthetic(s));
        }
      });
  std::vector<std::string> seen;
  task->onMeasured = [&](const MeasuredCandidate &c) {
    seen.push_back(getScheduleId(c.schedule));
  };
  Schedule a = sketches.front(), b = sketches.front();
  b.indices.back() = b.indices.back() == 0 ? 1 : 0;
  task->measure(a, SearchPhase::Explore); // measured before: not again
  EXPECT_EQ(task->measureBatch({a, b, b}, SearchPhase::Droplet), 1u);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0], std::vector<std::string>{getScheduleId(b)});
  EXPECT_EQ(seen, (std::vector<std::string>{getScheduleId(a), getScheduleId(b)}));
  // The best time asked for in the batch holds what was measured before it.
  ASSERT_EQ(bests.size(), 1u);
  EXPECT_EQ(bests[0], synthetic(a).measurement.median);
  EXPECT_EQ(task->find(b)->phase, SearchPhase::Droplet);
  EXPECT_EQ(task->measureBatch({a, b}, SearchPhase::Droplet), 0u);
}

namespace {

/// A recorded time and the time a re-timing gives, per schedule id.
struct FinalCheckCase {
  std::unique_ptr<SearchTask> task;
  std::vector<Schedule> schedules; ///< distinct; [0] is the untuned default
  std::map<std::string, double> retimed;
  std::map<std::string, unsigned> failInRound;
  std::vector<std::string> order; ///< what was re-timed, in order
  unsigned round = 0;

  CandidateRecord record(const Schedule &s, double seconds) const {
    CandidateRecord r;
    r.schedule = s;
    r.measurement.seconds = {seconds};
    r.measurement.median = seconds;
    return r;
  }
  /// The re-timing function: every batch is one round.
  BatchMeasureFn measure() {
    return [this](llvm::ArrayRef<Schedule> batch,
                  llvm::function_ref<std::optional<double>()> best,
                  llvm::function_ref<void(unsigned, CandidateRecord)> onRecord) {
      EXPECT_FALSE(best()); // no early stop in a final check
      for (auto [index, s] : llvm::enumerate(batch)) {
        std::string id = getScheduleId(s);
        order.push_back(id);
        CandidateRecord r = record(s, retimed.at(id) * (1 + 0.01 * round));
        auto fail = failInRound.find(id);
        if (fail != failInRound.end() && fail->second == round)
          r.error = ErrorClass::WrongResult;
        onRecord(index, std::move(r));
      }
      ++round;
    };
  }
};

class FinalCheckTest : public SearchTest {
protected:
  /// The untuned default and three other schedules, recorded at
  /// `recorded` seconds and re-timed at `retimed`.
  FinalCheckCase makeCase(std::vector<double> recorded,
                          std::vector<double> retimed) {
    FinalCheckCase c;
    c.task = makeTask(5, nullptr);
    c.schedules.push_back(sketches.front());
    llvm::StringSet<> ids;
    ids.insert(getScheduleId(sketches.front()));
    while (c.schedules.size() < recorded.size())
      if (std::optional<Schedule> s = c.task->sampleRandom())
        if (ids.insert(getScheduleId(*s)).second)
          c.schedules.push_back(*s);
    for (auto [index, s] : llvm::enumerate(c.schedules)) {
      c.task->addRecord(s, c.record(s, recorded[index]),
                        index ? SearchPhase::Explore : SearchPhase::Untuned);
      c.retimed[getScheduleId(s)] = retimed[index];
    }
    return c;
  }
  std::string id(const FinalCheckCase &c, unsigned i) {
    return getScheduleId(c.schedules[i]);
  }
  static void ignore(const Finalist &, const CandidateRecord &) {}
};

} // namespace

TEST_F(FinalCheckTest, TheUntunedDefaultWinsOverALuckyBest) {
  // Schedule 1 was recorded fastest by luck; the default (0), recorded 6%
  // slower, is the fastest when they are timed side by side. Schedule 3,
  // recorded 50% slower, is not a finalist.
  FinalCheckCase c = makeCase({1.06, 1.00, 1.02, 1.50}, {0.98, 1.05, 1.00, 0.5});
  unsigned records = 0;
  std::optional<FinalCheck> check = runFinalCheck(
      *c.task, c.schedules[0], c.measure(), FinalCheckOptions(),
      [&](const Finalist &, const CandidateRecord &) { ++records; });
  ASSERT_TRUE(check);
  ASSERT_EQ(check->finalists.size(), 3u);
  EXPECT_EQ(getScheduleId(check->finalists[0].schedule), id(c, 1));
  EXPECT_EQ(getScheduleId(check->finalists[1].schedule), id(c, 2));
  EXPECT_TRUE(check->finalists[2].untuned);
  // Three alternating rounds, the same order in each.
  std::vector<std::string> round = {id(c, 1), id(c, 2), id(c, 0)};
  std::vector<std::string> expected;
  for (int i = 0; i < 3; ++i)
    llvm::append_range(expected, round);
  EXPECT_EQ(c.order, expected);
  EXPECT_EQ(records, 9u);
  ASSERT_TRUE(check->winner);
  EXPECT_EQ(*check->winner, 2u);
  EXPECT_TRUE(check->changedBest());
  ASSERT_TRUE(check->getUntuned());
  // The median round stands for a finalist: a real measurement.
  EXPECT_DOUBLE_EQ(check->finalists[2].getMedianRound().measurement.median,
                   0.98 * 1.01);
}

TEST_F(FinalCheckTest, AFinalistThatFailsOnceIsOut) {
  // The best re-times fastest but gives a wrong result in round 1: it is
  // not timed again and cannot win.
  FinalCheckCase c = makeCase({1.10, 1.00, 1.02}, {1.20, 0.90, 1.00});
  c.failInRound[id(c, 1)] = 1;
  std::optional<FinalCheck> check =
      runFinalCheck(*c.task, c.schedules[0], c.measure(), FinalCheckOptions(),
                    ignore);
  ASSERT_TRUE(check);
  EXPECT_EQ(llvm::count(c.order, id(c, 1)), 2);
  EXPECT_EQ(llvm::count(c.order, id(c, 2)), 3);
  EXPECT_FALSE(check->finalists[0].isQualified(3));
  ASSERT_TRUE(check->winner);
  EXPECT_EQ(getScheduleId(check->finalists[*check->winner].schedule), id(c, 2));
  llvm::json::Value json = check->toJSON();
  EXPECT_EQ(*json.getAsObject()->getBoolean("changed_best"), true);
}

TEST_F(FinalCheckTest, TheUntunedDefaultIsAlwaysAFinalist) {
  // Recorded twice as slow as the best, it is re-timed all the same (one
  // unlucky recording is no proof), and wins; the third, 20% slower, is not
  // a finalist.
  FinalCheckCase c = makeCase({2.0, 1.0, 1.2}, {0.9, 1.0, 1.2});
  std::optional<FinalCheck> check = runFinalCheck(
      *c.task, c.schedules[0], c.measure(), FinalCheckOptions(), ignore);
  ASSERT_TRUE(check);
  ASSERT_EQ(check->finalists.size(), 2u);
  EXPECT_TRUE(check->finalists[1].untuned);
  EXPECT_EQ(check->winner, 1u);
}

TEST_F(FinalCheckTest, NothingToCompareNothingReTimed) {
  // The best is the untuned default, and nothing else is within 10% of it.
  FinalCheckCase c = makeCase({1.0, 1.2, 2.0}, {1.0, 1.2, 2.0});
  EXPECT_FALSE(runFinalCheck(*c.task, c.schedules[0], c.measure(),
                             FinalCheckOptions(), ignore));
  // Turned off.
  FinalCheckCase d = makeCase({1.0, 1.0, 1.0}, {1.0, 1.0, 1.0});
  FinalCheckOptions off;
  off.finalists = 0;
  EXPECT_FALSE(runFinalCheck(*d.task, d.schedules[0], d.measure(), off, ignore));
  EXPECT_TRUE(c.order.empty());
  EXPECT_TRUE(d.order.empty());
}

TEST_F(FinalCheckTest, TheSearchsBestStandsWhenItIsFastest) {
  FinalCheckCase c = makeCase({1.05, 1.00, 1.03, 1.04},
                              {1.05, 0.99, 1.03, 1.04});
  FinalCheckOptions one;
  one.finalists = 1; // the best and the default
  one.rounds = 2;
  std::optional<FinalCheck> check =
      runFinalCheck(*c.task, c.schedules[0], c.measure(), one, ignore);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->finalists.size(), 2u);
  EXPECT_EQ(c.order.size(), 4u);
  EXPECT_EQ(check->winner, 0u);
  EXPECT_FALSE(check->changedBest());
  // Two rounds: the lower middle one stands for each.
  EXPECT_DOUBLE_EQ(check->finalists[0].getMedianRound().measurement.median,
                   0.99);
}

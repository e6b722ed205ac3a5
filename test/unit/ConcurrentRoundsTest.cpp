//===- ConcurrentRoundsTest.cpp - Rounds of several workloads at once -----===//
//
// tuneWorkloads with TuneOptions::concurrent (ke/Search/ConcurrentRounds.h)
// on synthetic timings: fake devices take the batches that rounds post and
// answer them in the tuner's wait(), as an MPI run's rank 0 does with its
// ranks. What must hold: rounds of different workloads overlap, never two
// of one workload, every trial of the budget is spent once, and each
// workload's records come back as the search asked for them.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "ke/Search/Tuner.h"
#include "ke/Target/Target.h"
#include "ke/Workload/Kernel.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"

#include <map>

using namespace ke;
using namespace ke::testing;

namespace {

/// Fake devices: batches posted by rounds, answered in wait().
class FakeDevices final : public ConcurrentRounds {
public:
  explicit FakeDevices(unsigned devices) : devices(devices) {}

  struct Batch {
    unsigned workload;
    std::vector<Schedule> schedules;
    std::vector<CandidateRecord> records;
    bool answered = false;
  };

  unsigned getMaxRounds() const override { return devices; }
  bool begin() override {
    running = true;
    return true;
  }
  void wait(std::unique_lock<std::mutex> &lock) override {
    // Everything posted since the last call is "on the devices" at once.
    unsigned open = 0;
    std::set<unsigned> workloads;
    for (Batch *batch : posted)
      if (!batch->answered) {
        ++open;
        if (!workloads.insert(batch->workload).second)
          sameWorkloadTwice = true;
      }
    mostAtOnce = std::max(mostAtOnce, open);
    // Answer one batch per call, so that the others stay out meanwhile.
    for (Batch *batch : posted)
      if (!batch->answered) {
        for (const Schedule &s : batch->schedules)
          batch->records.push_back(synthetic(s));
        batch->answered = true;
        changed.notify_all();
        break;
      }
    changed.wait_for(lock, std::chrono::milliseconds(1));
  }
  void end() override { running = false; }

  /// A deterministic time, different per schedule.
  static CandidateRecord synthetic(const Schedule &s) {
    double t = 1e-3;
    for (unsigned i = 0; i < s.indices.size(); ++i)
      t *= 1 + 0.05 * ((s.indices[i] * 7 + i) % 5);
    CandidateRecord r;
    r.schedule = s;
    r.measurement.seconds = {t, t, t};
    r.measurement.median = t;
    return r;
  }

  unsigned devices;
  bool running = false;
  std::vector<Batch *> posted;
  unsigned mostAtOnce = 0;
  bool sameWorkloadTwice = false;
};

/// An evaluator whose batches go to the fake devices while they run, and
/// are answered on the spot before (the untuned default, the one-schedule
/// sketches).
class FakeEvaluator final : public Evaluator {
public:
  FakeEvaluator(FakeDevices &devices, unsigned workload,
                mlir::Operation *anchor)
      : devices(devices), workload(workload), anchor(anchor) {}
  mlir::Operation *getKernelAnchor() const override { return anchor; }
  CandidateRecord evaluate(const Schedule &s, std::optional<double>) override {
    return FakeDevices::synthetic(s);
  }
  CandidateRecord evaluateReference() override {
    CandidateRecord r;
    r.measurement.seconds = {1.0};
    r.measurement.median = 1.0;
    return r;
  }
  void evaluateBatch(llvm::ArrayRef<Schedule> schedules, BestFn best,
                     RecordFn onRecord) override {
    if (!devices.running)
      return Evaluator::evaluateBatch(schedules, best, onRecord);
    // On a round's thread, holding the baton.
    std::unique_lock<std::mutex> lock(devices.baton, std::adopt_lock);
    llvm::scope_exit stillHeld([&] { lock.release(); });
    FakeDevices::Batch batch{workload, schedules.vec()};
    devices.posted.push_back(&batch);
    devices.changed.wait(lock, [&] { return batch.answered; });
    llvm::erase(devices.posted, &batch);
    for (unsigned i = 0; i < batch.records.size(); ++i)
      onRecord(i, batch.records[i]);
  }

private:
  FakeDevices &devices;
  unsigned workload;
  mlir::Operation *anchor;
};

class ConcurrentRoundsTest : public IRTest {
protected:
  void SetUp() override {
    workloads = workloadsOf(R"mlir(
func.func @f(%a: tensor<64x48xf32>, %b: tensor<48x80xf32>, %c: tensor<64x80xf32>,
             %d: tensor<32x16xf32>, %e: tensor<16x24xf32>, %g: tensor<32x24xf32>,
             %h: tensor<40x40xf32>, %i: tensor<40x40xf32>, %j: tensor<40x40xf32>)
    -> (tensor<64x80xf32>, tensor<32x24xf32>, tensor<40x40xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<64x48xf32>, tensor<48x80xf32>) outs(%c : tensor<64x80xf32>) -> tensor<64x80xf32>
  %s = linalg.matmul ins(%d, %e : tensor<32x16xf32>, tensor<16x24xf32>) outs(%g : tensor<32x24xf32>) -> tensor<32x24xf32>
  %t = linalg.matmul ins(%h, %i : tensor<40x40xf32>, tensor<40x40xf32>) outs(%j : tensor<40x40xf32>) -> tensor<40x40xf32>
  return %r, %s, %t : tensor<64x80xf32>, tensor<32x24xf32>, tensor<40x40xf32>
})mlir");
    ASSERT_EQ(workloads.size(), 3u);
  }

  TuneOptions makeOptions(FakeDevices &devices) {
    TuneOptions options;
    options.trials = 40;
    options.explore = 24;
    options.explorer.batchSize = 8;
    options.explorer.populationSize = 128;
    options.showProgress = false;
    options.transferSamples = 0;
    options.createEvaluator =
        [&devices](unsigned index, mlir::Operation *anchor,
                   const TargetDescription &, const EvaluatorOptions &)
        -> mlir::FailureOr<std::unique_ptr<Evaluator>> {
      return std::unique_ptr<Evaluator>(
          std::make_unique<FakeEvaluator>(devices, index, anchor));
    };
    return options;
  }

  TargetDescription host = detectHostTarget();
  std::vector<Workload> workloads;
};

} // namespace

TEST_F(ConcurrentRoundsTest, RoundsOfDifferentWorkloadsOverlapAndSpendTheBudget) {
  FakeDevices devices(3);
  TuneOptions options = makeOptions(devices);
  options.concurrent = &devices;
  std::string records;
  llvm::raw_string_ostream recordsStream(records);
  options.records = &recordsStream;
  double wall = -1;
  options.searchWallSeconds = &wall;
  std::vector<TuningResult> results =
      tuneWorkloads(workloads, host, options);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_FALSE(devices.running); // end() was called
  EXPECT_GE(devices.mostAtOnce, 2u);
  EXPECT_FALSE(devices.sameWorkloadTwice);
  EXPECT_GE(wall, 0);
  unsigned trials = 0;
  for (const TuningResult &r : results) {
    EXPECT_TRUE(r.skipped.empty()) << r.skipped;
    EXPECT_EQ(r.trials, r.valid);
    EXPECT_TRUE(r.best.has_value());
    trials += r.trials;
  }
  // The budget is the workloads' together: 3 x 40 trials, spent exactly
  // (each space holds far more schedules).
  EXPECT_EQ(trials, 3u * options.trials);
  // No schedule was measured twice for one workload.
  llvm::StringSet<> seen;
  unsigned lines = 0;
  for (llvm::StringRef line : llvm::split(records, '\n')) {
    if (!line.contains("\"role\":\"trial\""))
      continue;
    ++lines;
    llvm::Expected<llvm::json::Value> json = llvm::json::parse(line);
    ASSERT_TRUE(bool(json));
    const llvm::json::Object *o = json->getAsObject();
    std::string schedule;
    llvm::raw_string_ostream(schedule) << *o->get("schedule");
    std::string id = o->getString("workload")->str() + " " + schedule;
    EXPECT_TRUE(seen.insert(id).second) << id;
  }
  EXPECT_EQ(lines, trials);
}

TEST_F(ConcurrentRoundsTest, OneDeviceRunsRoundsOneByOne) {
  // getMaxRounds() of 1: the tuner never calls begin() and measures as a
  // single process does.
  FakeDevices devices(1);
  TuneOptions options = makeOptions(devices);
  options.concurrent = &devices;
  std::vector<TuningResult> results =
      tuneWorkloads(workloads, host, options);
  unsigned trials = 0;
  for (const TuningResult &r : results)
    trials += r.trials;
  EXPECT_EQ(trials, 3u * options.trials);
  EXPECT_EQ(devices.mostAtOnce, 0u);
}

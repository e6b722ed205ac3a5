//===- TunedSchedulesTest.cpp - Records to schedules and back -------------===//
//
// chooseSchedule's one error policy: which record a kernel gets, why it
// gets the default instead (no database, no record, stale records, a record
// that does not fit), and that an unreadable database is an error; the
// database paths compile and bench resolve; and records made by
// makeScheduleRecord read back to the same schedule.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "ke/TunedSchedules/TunedSchedules.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace ke;
using ke::testing::IRTest;

namespace {

constexpr llvm::StringLiteral kMatmul = R"mlir(
func.func @f(%a: tensor<32x16xf32>, %b: tensor<16x24xf32>, %c: tensor<32x24xf32>) -> tensor<32x24xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x24xf32>) outs(%c : tensor<32x24xf32>) -> tensor<32x24xf32>
  return %r : tensor<32x24xf32>
})mlir";

class TunedSchedulesTest : public IRTest {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ke-tuned", directory));
    dbPath = (directory + "/ke-tuning.db").str();
    llvm::Expected<std::unique_ptr<TuningDatabase>> opened =
        TuningDatabase::open(dbPath);
    ASSERT_TRUE(bool(opened)) << llvm::toString(opened.takeError());
    db = std::move(*opened);
    Workload w = onlyWorkload(kMatmul);
    key = w.key;
    mlir::FailureOr<KernelModule> built =
        buildKernelModule(w.firstOp, getKernelFusion(host));
    ASSERT_TRUE(mlir::succeeded(built));
    kernel = std::move(*built);
    anchor = findKernelAnchor(*kernel.module);
  }
  void TearDown() override {
    db.reset();
    llvm::sys::fs::remove_directories(directory);
  }

  /// A valid record of `schedule` taking `seconds`.
  TuningRecord recordOf(const Schedule &schedule, double seconds) {
    TuningRecord record = makeScheduleRecord(
        &schedule, schedule.getScript(anchor, host), key, host, "trial");
    record.seconds = {seconds};
    record.medianSeconds = seconds;
    return record;
  }

  ChosenSchedule choose() {
    llvm::Expected<std::optional<ChosenSchedule>> chosen =
        chooseSchedule(db.get(), dbPath, anchor, key, host);
    EXPECT_TRUE(bool(chosen)) << llvm::toString(chosen.takeError());
    EXPECT_TRUE(*chosen);
    return std::move(**chosen);
  }

  TargetDescription host = detectHostTarget();
  llvm::SmallString<128> directory;
  std::string dbPath, key;
  std::unique_ptr<TuningDatabase> db;
  KernelModule kernel;
  mlir::Operation *anchor = nullptr;
};

TEST_F(TunedSchedulesTest, WithoutADatabaseTheDefaultIsChosen) {
  llvm::Expected<std::optional<ChosenSchedule>> chosen =
      chooseSchedule(nullptr, "", anchor, key, host);
  ASSERT_TRUE(chosen && *chosen);
  EXPECT_EQ((*chosen)->origin, ScheduleOrigin::NoDatabase);
  EXPECT_EQ((*chosen)->getRemark(""),
            "ke: no tuning database given; applied the default schedule " +
                getDefaultSchedule(anchor, host)->describe());
}

TEST_F(TunedSchedulesTest, AnEmptyDatabaseHasNoRecord) {
  ChosenSchedule chosen = choose();
  EXPECT_EQ(chosen.origin, ScheduleOrigin::NoRecord);
  EXPECT_EQ(chosen.whyDefault, "no tuned record for workload " + key);
}

TEST_F(TunedSchedulesTest, TheFastestCurrentRecordIsChosen) {
  llvm::SmallVector<Schedule> sketches = getCandidateSketches(anchor, host);
  ASSERT_FALSE(sketches.empty());
  Sampler sampler(3);
  std::optional<Schedule> slow = sampler.sampleAny(sketches, anchor, host);
  std::optional<Schedule> fast = sampler.sampleAny(sketches, anchor, host);
  ASSERT_TRUE(slow && fast);
  ASSERT_FALSE(
      bool(db->addRecords({recordOf(*slow, 2.0), recordOf(*fast, 1.0)})));
  ChosenSchedule chosen = choose();
  ASSERT_TRUE(chosen.isTuned());
  EXPECT_EQ(chosen.schedule.describe(), fast->describe());
  EXPECT_EQ(chosen.record->medianSeconds, 1.0);
  EXPECT_NE(chosen.getRemark(dbPath).find("applied tuned schedule " +
                                          fast->describe()),
            std::string::npos);
  // The record reads back to the schedule it was made from.
  llvm::Expected<Schedule> read =
      readRecordSchedule(*chosen.record, anchor, host);
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  EXPECT_EQ(read->describe(), fast->describe());
}

TEST_F(TunedSchedulesTest, RecordsOfAnotherPipelineAreStale) {
  std::optional<Schedule> schedule =
      Sampler(5).sampleAny(getCandidateSketches(anchor, host), anchor, host);
  ASSERT_TRUE(schedule);
  TuningRecord record = recordOf(*schedule, 1.0);
  record.pipelineHash = "0123456789abcdef";
  ASSERT_FALSE(bool(db->addRecords({record})));
  ChosenSchedule chosen = choose();
  EXPECT_EQ(chosen.origin, ScheduleOrigin::StaleRecords);
  EXPECT_NE(chosen.whyDefault.find("are stale"), std::string::npos);
  EXPECT_NE(chosen.getRemark(dbPath).find("applied the default schedule"),
            std::string::npos);
}

TEST_F(TunedSchedulesTest, ARecordThatDoesNotFitGivesTheDefault) {
  std::optional<Schedule> schedule =
      Sampler(7).sampleAny(getCandidateSketches(anchor, host), anchor, host);
  ASSERT_TRUE(schedule);
  TuningRecord record = recordOf(*schedule, 1.0);
  record.sketch = "cpu.no-such-rule";
  ASSERT_FALSE(bool(db->addRecords({record})));
  ChosenSchedule chosen = choose();
  EXPECT_EQ(chosen.origin, ScheduleOrigin::UnfitRecord);
  EXPECT_NE(chosen.whyDefault.find("does not fit this ke"), std::string::npos);
  ASSERT_TRUE(chosen.record);
  EXPECT_EQ(chosen.record->sketch, "cpu.no-such-rule");
}

TEST_F(TunedSchedulesTest, DatabasePaths) {
  // An explicit path must exist; an empty one without $KE_DB or a
  // ke-tuning.db in the working directory means no database.
  llvm::Expected<std::string> missing =
      resolveDatabasePath(dbPath + ".missing");
  ASSERT_FALSE(bool(missing));
  EXPECT_EQ(llvm::toString(missing.takeError()),
            "tuning database '" + dbPath + ".missing' does not exist");
  llvm::Expected<std::string> given = resolveDatabasePath(dbPath);
  ASSERT_TRUE(bool(given));
  EXPECT_EQ(*given, dbPath);

  llvm::Expected<std::unique_ptr<TuningDatabase>> none =
      openScheduleDatabase("");
  ASSERT_TRUE(bool(none));
  EXPECT_EQ(none->get(), nullptr);
  llvm::Expected<std::unique_ptr<TuningDatabase>> absent =
      openScheduleDatabase(dbPath + ".missing");
  ASSERT_FALSE(bool(absent));
  llvm::consumeError(absent.takeError());
  EXPECT_FALSE(llvm::sys::fs::exists(dbPath + ".missing"));
  // A file that is not a database.
  std::string notDb = (directory + "/not-a.db").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream(notDb, ec) << "not sqlite";
  }
  llvm::Expected<std::unique_ptr<TuningDatabase>> wrong =
      openScheduleDatabase(notDb);
  ASSERT_FALSE(bool(wrong));
  EXPECT_NE(llvm::toString(wrong.takeError())
                .find("cannot open the tuning database '" + notDb + "'"),
            std::string::npos);
}

TEST_F(TunedSchedulesTest, KernelGroupingAndHashPerTarget) {
  llvm::Expected<TargetDescription> cuda = parseTarget("cuda:sm_90");
  ASSERT_TRUE(bool(cuda));
  EXPECT_EQ(getKernelFusion(*cuda),
            KernelFusion::RowReductionsInternalAccumulators);
  EXPECT_EQ(getKernelFusion(host), KernelFusion::RowReductions);
  // Scalable SVE keeps the rows' kernels apart (cpu.tile's scalable vectors).
  llvm::Expected<TargetDescription> sve = parseTarget("cpu:aarch64");
  ASSERT_TRUE(bool(sve));
  EXPECT_EQ(getKernelFusion(*sve), KernelFusion::Elementwise);
  EXPECT_NE(getPipelineHash(*cuda), getPipelineHash(host));
  EXPECT_EQ(
      makeScheduleRecord(nullptr, "", key, *cuda, "reference").pipelineHash,
      getPipelineHash(*cuda));
}

} // namespace

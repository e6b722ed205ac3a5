//===- ScheduleTest.cpp - Knob spaces, schedules, sampler -----------------===//

#include "TestUtils.h"

#include "ke/Schedule/Schedule.h"
#include "ke/Workload/Kernel.h"

using namespace ke;
using ke::testing::IRTest;

namespace {

TEST(KnobSpaceTest, TileCandidates) {
  llvm::SmallVector<int64_t> tiles = tileCandidates(96, 64);
  EXPECT_EQ(tiles, (llvm::SmallVector<int64_t>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32,
                                               48, 64}));
  // Irregular extents keep powers of two (partial tiles are peeled) and
  // their own size when small enough.
  EXPECT_EQ(tileCandidates(37, 64),
            (llvm::SmallVector<int64_t>{1, 2, 4, 8, 16, 32, 37}));
  EXPECT_EQ(tileCandidates(1, 16), (llvm::SmallVector<int64_t>{1}));
}

TEST(KnobSpaceTest, AssignmentLookupAndSize) {
  KnobSpace space;
  space.knobs.push_back({"a", {1, 2, 4}, 1});
  space.knobs.push_back({"b", {0, 8}, 0});
  EXPECT_EQ(space.size(), 6u);
  EXPECT_EQ(space.find("b"), 1);
  EXPECT_EQ(space.find("c"), -1);
  KnobAssignment assignment(space, getDefaultIndices(space));
  EXPECT_EQ(assignment.get("a"), 2);
  EXPECT_EQ(assignment.get("b"), 0);
  EXPECT_EQ(assignment.get("missing", 7), 7);
  EXPECT_EQ(assignment.str(), "a=2 b=0");
}

class ScheduleTest : public IRTest {
protected:
  /// The kernel anchor of a 37x53x29 matmul (irregular on purpose).
  mlir::Operation *matmulAnchor() {
    Workload w = onlyWorkload(R"mlir(
func.func @f(%a: tensor<37x29xf32>, %b: tensor<29x53xf32>, %c: tensor<37x53xf32>) -> tensor<37x53xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<37x29xf32>, tensor<29x53xf32>) outs(%c : tensor<37x53xf32>) -> tensor<37x53xf32>
  return %r : tensor<37x53xf32>
})mlir");
    mlir::FailureOr<KernelModule> k = buildKernelModule(w.firstOp);
    EXPECT_TRUE(mlir::succeeded(k));
    kernels.push_back(std::move(k->module));
    return findKernelAnchor(*kernels.back());
  }

  TargetDescription target() {
    return llvm::cantFail(parseTarget("cpu:a64fx"));
  }

  llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> kernels;
};

TEST_F(ScheduleTest, DefaultIsDeterministicAndParses) {
  mlir::Operation *anchor = matmulAnchor();
  mlir::FailureOr<Schedule> schedule = getDefaultSchedule(anchor, target());
  ASSERT_TRUE(mlir::succeeded(schedule));
  EXPECT_EQ(schedule->rule->getName(), "cpu.tile");
  std::string script = schedule->getScript(anchor, target());
  EXPECT_EQ(script, schedule->getScript(anchor, target()));
  mlir::OwningOpRef<mlir::ModuleOp> parsed = parseScript(script, &context);
  ASSERT_TRUE(parsed);
}

TEST_F(ScheduleTest, ScriptRoundTripsThroughText) {
  mlir::Operation *anchor = matmulAnchor();
  Schedule schedule = *getDefaultSchedule(anchor, target());
  mlir::OwningOpRef<mlir::ModuleOp> first =
      parseScript(schedule.getScript(anchor, target()), &context);
  ASSERT_TRUE(first);
  std::string printed;
  llvm::raw_string_ostream(printed) << *first;
  mlir::OwningOpRef<mlir::ModuleOp> second = parseScript(printed, &context);
  ASSERT_TRUE(second);
  std::string reprinted;
  llvm::raw_string_ostream(reprinted) << *second;
  EXPECT_EQ(printed, reprinted);
}

TEST_F(ScheduleTest, JsonRebuildsTheSameSchedule) {
  mlir::Operation *anchor = matmulAnchor();
  Schedule schedule = *getDefaultSchedule(anchor, target());
  Sampler sampler(42);
  schedule.indices = *sampler.sample(schedule, anchor, target());
  llvm::Expected<Schedule> rebuilt =
      scheduleFromJSON(schedule.toJSON(), anchor, target());
  ASSERT_TRUE(bool(rebuilt)) << llvm::toString(rebuilt.takeError());
  EXPECT_EQ(rebuilt->indices, schedule.indices);
  EXPECT_EQ(rebuilt->getScript(anchor, target()),
            schedule.getScript(anchor, target()));
}

TEST_F(ScheduleTest, JsonErrorsNameTheProblem) {
  mlir::Operation *anchor = matmulAnchor();
  Schedule schedule = *getDefaultSchedule(anchor, target());
  auto errorOf = [&](llvm::json::Value value) {
    llvm::Expected<Schedule> s = scheduleFromJSON(value, anchor, target());
    return s ? std::string("no error") : llvm::toString(s.takeError());
  };
  EXPECT_NE(errorOf(llvm::json::Object{{"sketch", "cpu.nope"},
                                       {"knobs", llvm::json::Object{}}})
                .find("unknown sketch"),
            std::string::npos);
  llvm::json::Value bad = schedule.toJSON();
  (*bad.getAsObject()->getObject("knobs"))["threads"] = 3;
  EXPECT_NE(errorOf(bad).find("knob 'threads' cannot be 3"), std::string::npos);
  EXPECT_NE(errorOf(llvm::json::Object{}).find("needs"), std::string::npos);
}

TEST_F(ScheduleTest, SamplerRespectsLimitsAndSeeds) {
  mlir::Operation *anchor = matmulAnchor();
  TargetDescription t = target();
  Schedule schedule = *getDefaultSchedule(anchor, t);
  Sampler a(7), b(7);
  for (int i = 0; i < 50; ++i) {
    std::optional<KnobIndices> x = a.sample(schedule, anchor, t);
    std::optional<KnobIndices> y = b.sample(schedule, anchor, t);
    ASSERT_TRUE(x && y);
    EXPECT_EQ(*x, *y); // the same seed gives the same candidates
    std::string reason;
    EXPECT_TRUE(mlir::succeeded(schedule.rule->checkLimits(
        anchor, t, KnobAssignment(schedule.space, *x), reason)))
        << reason;
  }
}

TEST_F(ScheduleTest, LimitsRejectRegisterTilesThatDoNotFit) {
  mlir::Operation *anchor = matmulAnchor();
  TargetDescription t = target();
  Schedule schedule = *getDefaultSchedule(anchor, t);
  // 32 x 37 accumulators > 32 registers x 16 lanes on A64FX.
  int reg0 = schedule.space.find("reg.d0"), reg1 = schedule.space.find("reg.d1");
  ASSERT_GE(reg0, 0);
  ASSERT_GE(reg1, 0);
  schedule.indices[reg0] = schedule.space.knobs[reg0].choices.size() - 1;
  schedule.indices[reg1] = schedule.space.knobs[reg1].choices.size() - 1;
  std::string reason;
  EXPECT_TRUE(mlir::failed(schedule.rule->checkLimits(
      anchor, t, schedule.getAssignment(), reason)));
  EXPECT_NE(reason.find("vector registers"), std::string::npos);
}

TEST_F(ScheduleTest, GpuTargetsGetGpuRules) {
  mlir::Operation *anchor = matmulAnchor();
  mlir::FailureOr<Schedule> cuda =
      getDefaultSchedule(anchor, llvm::cantFail(parseTarget("cuda:sm_90")));
  ASSERT_TRUE(mlir::succeeded(cuda));
  EXPECT_TRUE(cuda->rule->getName().starts_with("gpu."));
  // CPU rules never serve GPU targets, and the other way round.
  mlir::FailureOr<Schedule> cpu =
      getDefaultSchedule(anchor, llvm::cantFail(parseTarget("cpu:x86-64-v3")));
  ASSERT_TRUE(mlir::succeeded(cpu));
  EXPECT_TRUE(cpu->rule->getName().starts_with("cpu."));
}

} // namespace

//===- EvaluatorTest.cpp - Candidates built, run, checked and timed -------===//

#include "TestUtils.h"

#include "ke/Measure/CpuEvaluator.h"

#include "../../lib/Measure/CandidateSteps.h"

#include <cmath>
#include <limits>

using namespace ke;
using ke::testing::FixedScriptRule;
using ke::testing::IRTest;

namespace {

class EvaluatorTest : public IRTest {
protected:
  std::unique_ptr<CpuEvaluator> evaluatorFor(llvm::StringRef source) {
    Workload w = onlyWorkload(source);
    EvaluatorOptions options;
    options.measure.minTotalSeconds = 0.001;
    options.timeoutSeconds = 30;
    mlir::FailureOr<std::unique_ptr<CpuEvaluator>> e =
        CpuEvaluator::create(w.firstOp, host, options);
    EXPECT_TRUE(mlir::succeeded(e));
    return mlir::succeeded(e) ? std::move(*e) : nullptr;
  }

  Schedule fixed(const SketchRule &rule) {
    Schedule s;
    s.rule = &rule;
    return s;
  }

  TargetDescription host = detectHostTarget();
  static constexpr llvm::StringLiteral matmul = R"mlir(
func.func @f(%a: tensor<24x20xf32>, %b: tensor<20x36xf32>, %c: tensor<24x36xf32>) -> tensor<24x36xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<24x20xf32>, tensor<20x36xf32>) outs(%c : tensor<24x36xf32>) -> tensor<24x36xf32>
  return %r : tensor<24x36xf32>
})mlir";
};

TEST_F(EvaluatorTest, DefaultScheduleIsValidAndChecked) {
  std::unique_ptr<CpuEvaluator> evaluator = evaluatorFor(matmul);
  ASSERT_TRUE(evaluator);
  mlir::FailureOr<Schedule> schedule =
      getDefaultSchedule(evaluator->getKernelAnchor(), host);
  ASSERT_TRUE(mlir::succeeded(schedule));
  CandidateRecord record = evaluator->evaluate(*schedule);
  EXPECT_EQ(record.error, ErrorClass::None) << record.message;
  EXPECT_LE(record.relativeError, 1e-4);
  EXPECT_GE(record.measurement.seconds.size(), 3u);
  EXPECT_GT(record.measurement.median, 0);
}

TEST_F(EvaluatorTest, ReferenceAgreesWithItself) {
  std::unique_ptr<CpuEvaluator> evaluator = evaluatorFor(matmul);
  ASSERT_TRUE(evaluator);
  CandidateRecord record = evaluator->evaluateReference();
  EXPECT_EQ(record.error, ErrorClass::None) << record.message;
  EXPECT_EQ(record.relativeError, 0.0);
}

TEST_F(EvaluatorTest, UnparsableScriptIsAnInvalidSchedule) {
  std::unique_ptr<CpuEvaluator> evaluator = evaluatorFor(matmul);
  ASSERT_TRUE(evaluator);
  FixedScriptRule rule("this is not MLIR");
  CandidateRecord record = evaluator->evaluate(fixed(rule));
  EXPECT_EQ(record.error, ErrorClass::InvalidSchedule);
}

TEST_F(EvaluatorTest, FailingTransformIsAnInvalidScheduleWithItsMessage) {
  std::unique_ptr<CpuEvaluator> evaluator = evaluatorFor(matmul);
  ASSERT_TRUE(evaluator);
  // A matmul has no decomposition: the transform fails when applied.
  FixedScriptRule rule(R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %d = transform.structured.decompose %mm : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
})mlir");
  CandidateRecord record = evaluator->evaluate(fixed(rule));
  EXPECT_EQ(record.error, ErrorClass::InvalidSchedule);
  EXPECT_FALSE(record.message.empty());
}

TEST_F(EvaluatorTest, HugeVectorsAreACompileErrorNotAMinuteOfLLVM) {
  // Vectorizing a whole 96 x 64 elementwise op: 6144 elements of
  // straight-line code, refused before LLVM runs.
  std::unique_ptr<CpuEvaluator> evaluator = evaluatorFor(R"mlir(
func.func @f(%a: tensor<96x64xf32>, %b: tensor<96x64xf32>) -> tensor<96x64xf32> {
  %r = linalg.exp ins(%a : tensor<96x64xf32>) outs(%b : tensor<96x64xf32>) -> tensor<96x64xf32>
  return %r : tensor<96x64xf32>
})mlir");
  ASSERT_TRUE(evaluator);
  FixedScriptRule rule(R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %v = transform.structured.vectorize_children_and_apply_patterns %f : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
})mlir");
  CandidateRecord record = evaluator->evaluate(fixed(rule));
  EXPECT_EQ(record.error, ErrorClass::CompileError);
  EXPECT_NE(record.message.find("vector<96x64xf32> (6144 elements)"),
            std::string::npos)
      << record.message;
}

TEST_F(EvaluatorTest, EmptyScheduleStillComputesTheRightThing) {
  std::unique_ptr<CpuEvaluator> evaluator = evaluatorFor(matmul);
  ASSERT_TRUE(evaluator);
  FixedScriptRule rule(R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.yield
  }
})mlir");
  CandidateRecord record = evaluator->evaluate(fixed(rule));
  EXPECT_EQ(record.error, ErrorClass::None) << record.message;
}

TEST_F(EvaluatorTest, RefusesTargetsItCannotMeasure) {
  Workload w = onlyWorkload(matmul);
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) {
    return mlir::success();
  });
  EXPECT_TRUE(mlir::failed(CpuEvaluator::create(
      w.firstOp, llvm::cantFail(parseTarget("cuda:sm_90")), EvaluatorOptions())));
}

TEST_F(EvaluatorTest, KernelsNeedStaticShapes) {
  Workload w = onlyWorkload(R"mlir(
func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %r = linalg.exp ins(%a : tensor<?x4xf32>) outs(%b : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
})mlir");
  std::string message;
  mlir::ScopedDiagnosticHandler capture(&context, [&](mlir::Diagnostic &d) {
    message = d.str();
    return mlir::success();
  });
  EXPECT_TRUE(mlir::failed(CpuEvaluator::create(w.firstOp, host, EvaluatorOptions())));
  EXPECT_NE(message.find("is dynamic; kernels need static shapes"),
            std::string::npos)
      << message;
}

} // namespace

namespace {

// A result full of NaN has no relative error JSON can carry: the child's
// report must still parse, as a wrong result, not as a crash.
TEST(CandidateReportTest, NaNResultIsAWrongResultNotACrash) {
  ChildResult child;
  llvm::raw_string_ostream report(child.report);
  writeCandidateReport(report, ErrorClass::WrongResult, "output #0 holds NaN",
                       nullptr, std::numeric_limits<double>::quiet_NaN());
  report.flush();
  CandidateRecord record = readCandidateReport(child, nullptr);
  EXPECT_EQ(record.error, ErrorClass::WrongResult);
  EXPECT_EQ(record.message, "output #0 holds NaN");
  EXPECT_TRUE(std::isinf(record.relativeError));
}

} // namespace

//===- GpuTestUtils.h - GPU evaluator tests for CUDA and ROCm -----*- C++
//-*-===//
//
// What the CUDA and ROCm evaluator tests share: a matmul kernel, a builder
// that packs the lowered launches against its buffers, and the candidate
// path up to a device the test hides.
//
//===----------------------------------------------------------------------===//
#ifndef KE_TEST_UNIT_GPUTESTUTILS_H
#define KE_TEST_UNIT_GPUTESTUTILS_H

#include "TestUtils.h"

#include "ke/Runtime/ChildProcess.h"
#include "ke/Runtime/LaunchParameters.h"
#include "ke/Schedule/Schedule.h"
#include "ke/Measure/GpuEvaluator.h"
#include "ke/TunedSchedules/TunedSchedules.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdlib>

namespace ke::testing {

/// Runs `open(0)` in a child with $`variable` set to `library` (left as it
/// is when null); returns its error message, or "opened <name>".
template <typename Device>
std::string
openDeviceInChild(llvm::Expected<std::unique_ptr<Device>> (*open)(int),
                  const char *variable, const char *library) {
  ChildResult child = runInChild(
      [&](llvm::raw_ostream &report) -> int {
        if (library)
          setenv(variable, library, 1);
        llvm::Expected<std::unique_ptr<Device>> device = open(0);
        if (!device)
          report << llvm::toString(device.takeError());
        else
          report << "opened " << (*device)->getInfo().name;
        return 0;
      },
      60);
  EXPECT_TRUE(child.succeeded()) << child.describe();
  return child.report;
}

/// The GPU evaluator on a 24x20 by 20x36 matmul, for one target.
class GpuEvaluatorTestBase : public IRTest {
protected:
  GpuEvaluatorTestBase(llvm::StringRef targetName, double timeoutSeconds)
      : target(llvm::cantFail(parseTarget(targetName))),
        timeoutSeconds(timeoutSeconds) {}

  std::unique_ptr<GpuEvaluator> evaluatorFor(GpuKernelBuilder builder,
                                             unsigned jobs = 0) {
    Workload w = onlyWorkload(R"mlir(
func.func @f(%a: tensor<24x20xf32>, %b: tensor<20x36xf32>, %c: tensor<24x36xf32>) -> tensor<24x36xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<24x20xf32>, tensor<20x36xf32>) outs(%c : tensor<24x36xf32>) -> tensor<24x36xf32>
  return %r : tensor<24x36xf32>
})mlir");
    EvaluatorOptions options;
    options.timeoutSeconds = timeoutSeconds;
    options.fusion = getKernelFusion(target);
    options.jobs = jobs;
    mlir::FailureOr<std::unique_ptr<GpuEvaluator>> e =
        GpuEvaluator::create(w.firstOp, target, options, std::move(builder));
    EXPECT_TRUE(mlir::succeeded(e));
    return mlir::succeeded(e) ? std::move(*e) : nullptr;
  }

  /// A builder that lowers with the default builder, packs every launch
  /// against the matmul's buffers and, since it runs in the candidate's
  /// child, reports through its error: "packed N launches, M parameters,
  /// format F".
  static GpuKernelBuilder packingBuilder() {
    return
        [](mlir::ModuleOp kernel,
           const TargetDescription &target) -> llvm::Expected<GpuKernelBinary> {
          llvm::Expected<GpuKernelBinary> binary =
              getDefaultGpuKernelBuilder()(kernel, target);
          if (!binary)
            return binary.takeError();
          llvm::SmallVector<int64_t> a = {24, 20}, b = {20, 36}, c = {24, 36};
          llvm::SmallVector<DeviceBufferRef> buffers = {
              {0x1000, a}, {0x2000, b}, {0x3000, c}};
          size_t parameters = 0;
          for (const GpuLaunch &launch : binary->launches) {
            llvm::Expected<LaunchParameters> packed =
                packLaunchArguments(launch, buffers);
            if (!packed)
              return packed.takeError();
            parameters += packed->size();
          }
          return llvm::createStringError(
              llvm::inconvertibleErrorCode(),
              llvm::formatv("packed {0} launches, {1} parameters, format {2}",
                            binary->launches.size(), parameters, binary->format)
                  .str());
        };
  }

  /// Evaluates the default schedule with `builder`.
  CandidateRecord evaluateUntuned(GpuKernelBuilder builder) {
    std::unique_ptr<GpuEvaluator> evaluator = evaluatorFor(std::move(builder));
    EXPECT_TRUE(evaluator);
    if (!evaluator)
      return {};
    mlir::FailureOr<Schedule> untuned =
        getDefaultSchedule(evaluator->getKernelAnchor(), target);
    EXPECT_TRUE(mlir::succeeded(untuned));
    if (mlir::failed(untuned))
      return {};
    return evaluator->evaluate(*untuned);
  }

  /// Evaluates the default schedule with the default builder while
  /// $`variable` names `library`, which is not there: the whole candidate
  /// path runs up to opening the device. The child inherits the variable.
  CandidateRecord evaluateWithout(const char *variable, const char *library) {
    setenv(variable, library, 1);
    CandidateRecord record = evaluateUntuned(getDefaultGpuKernelBuilder());
    unsetenv(variable);
    return record;
  }

  /// True when createEvaluator picks the GPU evaluator for the target.
  bool createEvaluatorPicksTheGpuPath() {
    Workload w = onlyWorkload(R"mlir(
func.func @f(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.exp ins(%a : tensor<8xf32>) outs(%b : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
})mlir");
    mlir::FailureOr<std::unique_ptr<Evaluator>> e =
        createEvaluator(w.firstOp, target, EvaluatorOptions());
    return mlir::succeeded(e) && dynamic_cast<GpuEvaluator *>(e->get());
  }

  TargetDescription target;
  double timeoutSeconds;
};

} // namespace ke::testing

#endif // KE_TEST_UNIT_GPUTESTUTILS_H

//===- HipRunnerTest.cpp - HIP runner and ROCm evaluation without a GPU ---===//
//
// What can be checked on a machine without an AMD GPU: a missing HIP runtime
// or device reported as such (in child processes: HIP state, even a failed
// load, stays out of the test process), the device description, and the
// rocm candidate path of the GPU evaluator up to the device: the ROCDL
// lowering builds a code object whose launches pack (with the CUDA runner's
// packLaunchArguments) against the kernel's buffers.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "ke/Codegen/RocdlPipeline.h"
#include "ke/Runtime/ChildProcess.h"
#include "ke/Runtime/HipRunner.h"
#include "ke/Search/GpuEvaluator.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdlib>

using namespace ke;
using ke::testing::IRTest;

namespace {

constexpr const char *kMissing = "/nonexistent/libamdhip64.so";

/// Runs openHipDevice in a child with $KE_HIP_LIBRARY set to `library`
/// (left as it is when null); returns its error message, or "opened <name>".
std::string openInChild(const char *library) {
  ChildResult child = runInChild(
      [&](llvm::raw_ostream &report) -> int {
        if (library)
          setenv("KE_HIP_LIBRARY", library, 1);
        llvm::Expected<std::unique_ptr<HipDevice>> device = openHipDevice(0);
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

/// True when this process has mapped a HIP runtime.
bool hipIsLoadedHere() {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> maps =
      llvm::MemoryBuffer::getFileAsStream("/proc/self/maps");
  return maps && (*maps)->getBuffer().contains("libamdhip64");
}

TEST(HipDeviceTest, MissingRuntimeIsReported) {
  std::string message = openInChild(kMissing);
  EXPECT_EQ(message.find("no HIP runtime (/nonexistent/libamdhip64.so not "
                         "found"),
            0u)
      << message;
}

TEST(HipDeviceTest, ALibraryThatIsNotHipIsReported) {
  // It loads, but exports none of HIP's functions.
  std::string message = openInChild("libm.so.6");
  EXPECT_EQ(message.find("the HIP runtime libm.so.6 lacks hipInit"), 0u)
      << message;
}

TEST(HipDeviceTest, ThisMachineHasADeviceOrSaysWhyNot) {
  std::string message = openInChild(nullptr);
  // Either this machine has an AMD GPU, or the message says what is missing:
  // ROCm itself (all the default library names tried), or the GPU.
  llvm::StringRef text(message);
  EXPECT_TRUE(text.starts_with("opened ") ||
              text.starts_with("no HIP runtime (libamdhip64.so.6, "
                               "libamdhip64.so.5, libamdhip64.so not found") ||
              text.starts_with("no AMD GPU"))
      << message;
}

TEST(HipDeviceTest, ProbeRunsInAChildAndReportsTheMissingRuntime) {
  setenv("KE_HIP_LIBRARY", kMissing, 1);
  llvm::Expected<HipDeviceInfo> info = probeHipDevice(0, 60);
  unsetenv("KE_HIP_LIBRARY");
  ASSERT_FALSE(bool(info));
  EXPECT_NE(llvm::toString(info.takeError()).find("no HIP runtime"),
            std::string::npos);
  // With the default names too, whatever this machine has: the runtime is
  // opened in the child only.
  llvm::Expected<HipDeviceInfo> probed = probeHipDevice(0, 60);
  if (!probed)
    llvm::consumeError(probed.takeError());
  EXPECT_FALSE(hipIsLoadedHere());
}

TEST(HipDeviceTest, DeviceInfoRoundTripsThroughJSON) {
  HipDeviceInfo info;
  info.ordinal = 1;
  info.name = "AMD Instinct MI300X";
  info.gcnArchName = "gfx942:sramecc+:xnack-";
  info.multiprocessors = 304;
  info.warpSize = 64;
  info.l2CacheBytes = 4ull << 20;
  info.totalMemoryBytes = 192ull << 30;
  info.sharedMemoryPerBlockBytes = 64 * 1024;
  info.runtimeVersion = 60241134;
  llvm::Expected<HipDeviceInfo> back = HipDeviceInfo::fromJSON(info.toJSON());
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->getChip(), "gfx942");
  EXPECT_EQ(back->gcnArchName, info.gcnArchName);
  EXPECT_EQ(back->name, info.name);
  EXPECT_EQ(back->multiprocessors, 304u);
  EXPECT_EQ(back->totalMemoryBytes, info.totalMemoryBytes);
  EXPECT_EQ(back->sharedMemoryPerBlockBytes, info.sharedMemoryPerBlockBytes);
  EXPECT_EQ(back->runtimeVersion, info.runtimeVersion);
}

class RocmEvaluatorTest : public IRTest {
protected:
  void SetUp() override {
    // The ROCDL lowering links its code object with ld.lld.
    if (findLld().empty())
      GTEST_SKIP() << "no ld.lld to link AMDGPU code objects";
  }

  std::unique_ptr<GpuEvaluator> evaluatorFor(GpuKernelBuilder builder) {
    Workload w = onlyWorkload(R"mlir(
func.func @f(%a: tensor<24x20xf32>, %b: tensor<20x36xf32>, %c: tensor<24x36xf32>) -> tensor<24x36xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<24x20xf32>, tensor<20x36xf32>) outs(%c : tensor<24x36xf32>) -> tensor<24x36xf32>
  return %r : tensor<24x36xf32>
})mlir");
    EvaluatorOptions options;
    options.timeoutSeconds = 60;
    mlir::FailureOr<std::unique_ptr<GpuEvaluator>> e =
        GpuEvaluator::create(w.firstOp, rocm, options, std::move(builder));
    EXPECT_TRUE(mlir::succeeded(e));
    return mlir::succeeded(e) ? std::move(*e) : nullptr;
  }

  TargetDescription rocm = llvm::cantFail(parseTarget("rocm:gfx942"));
};

TEST_F(RocmEvaluatorTest, DefaultScheduleLowersAndStopsAtTheMissingRuntime) {
  // The whole rocm candidate path up to the device: the GPU sketch's default
  // schedule applies, the ROCDL lowering produces a code object, and only
  // opening the device fails (no HIP runtime here, whatever the machine).
  std::unique_ptr<GpuEvaluator> evaluator =
      evaluatorFor(getDefaultGpuKernelBuilder());
  ASSERT_TRUE(evaluator);
  mlir::FailureOr<Schedule> untuned =
      getDefaultSchedule(evaluator->getKernelAnchor(), rocm);
  ASSERT_TRUE(mlir::succeeded(untuned));
  setenv("KE_HIP_LIBRARY", kMissing, 1);
  CandidateRecord record = evaluator->evaluate(*untuned);
  unsetenv("KE_HIP_LIBRARY");
  EXPECT_EQ(record.error, ErrorClass::LaunchError) << record.message;
  EXPECT_NE(record.message.find("no HIP runtime"), std::string::npos)
      << record.message;
}

TEST_F(RocmEvaluatorTest, HsacoLaunchesPackLikeCudaOnes) {
  // The launches of the code object pack with packLaunchArguments, the
  // function the CUDA runner uses, against the kernel module's buffers. The
  // builder runs in the candidate's child, so it reports through its error.
  std::unique_ptr<GpuEvaluator> evaluator =
      evaluatorFor([](mlir::ModuleOp kernel, const TargetDescription &target)
                       -> llvm::Expected<GpuKernelBinary> {
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
      });
  ASSERT_TRUE(evaluator);
  mlir::FailureOr<Schedule> untuned =
      getDefaultSchedule(evaluator->getKernelAnchor(), rocm);
  ASSERT_TRUE(mlir::succeeded(untuned));
  CandidateRecord record = evaluator->evaluate(*untuned);
  EXPECT_EQ(record.error, ErrorClass::CompileError);
  EXPECT_EQ(record.message.find("packed "), 0u) << record.message;
  EXPECT_EQ(record.message.find("packed 0 launches"), std::string::npos)
      << record.message;
  EXPECT_NE(record.message.find("format hsaco"), std::string::npos)
      << record.message;
}

TEST_F(RocmEvaluatorTest, CreateEvaluatorPicksTheGpuPathForRocm) {
  Workload w = onlyWorkload(R"mlir(
func.func @f(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.exp ins(%a : tensor<8xf32>) outs(%b : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
})mlir");
  mlir::FailureOr<std::unique_ptr<Evaluator>> e =
      createEvaluator(w.firstOp, rocm, EvaluatorOptions());
  ASSERT_TRUE(mlir::succeeded(e));
  EXPECT_TRUE(dynamic_cast<GpuEvaluator *>(e->get()));
}

} // namespace

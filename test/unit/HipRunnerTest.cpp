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

#include "GpuTestUtils.h"

#include "ke/Codegen/RocdlPipeline.h"
#include "ke/Runtime/ChildProcess.h"
#include "ke/Runtime/HipRunner.h"
#include "ke/Measure/GpuEvaluator.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdlib>

using namespace ke;
using ke::testing::IRTest;

namespace {

constexpr const char *kMissing = "/nonexistent/libamdhip64.so";

/// Runs openHipDevice in a child with $KE_HIP_LIBRARY set to `library` (left as
/// it is when null); returns its error message, or "opened <name>".
std::string openInChild(const char *library) {
  return ke::testing::openDeviceInChild(openHipDevice, "KE_HIP_LIBRARY",
                                        library);
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

class RocmEvaluatorTest : public ke::testing::GpuEvaluatorTestBase {
protected:
  RocmEvaluatorTest() : GpuEvaluatorTestBase("rocm:gfx942", 60) {}

  void SetUp() override {
    // The ROCDL lowering links its code object with ld.lld.
    if (findLld().empty())
      GTEST_SKIP() << "no ld.lld to link AMDGPU code objects";
  }
};

TEST_F(RocmEvaluatorTest, DefaultScheduleLowersAndStopsAtTheMissingRuntime) {
  // The whole rocm candidate path up to the device: the GPU sketch's default
  // schedule applies, the ROCDL lowering produces a code object, and only
  // opening the device fails (no HIP runtime here, whatever the machine).
  CandidateRecord record = evaluateWithout("KE_HIP_LIBRARY", kMissing);
  EXPECT_EQ(record.error, ErrorClass::LaunchError) << record.message;
  EXPECT_NE(record.message.find("no HIP runtime"), std::string::npos)
      << record.message;
}

TEST_F(RocmEvaluatorTest, HsacoLaunchesPackLikeCudaOnes) {
  // The launches of the code object pack with packLaunchArguments, the
  // function the CUDA runner uses, against the kernel module's buffers.
  CandidateRecord record = evaluateUntuned(packingBuilder());
  EXPECT_EQ(record.error, ErrorClass::CompileError);
  EXPECT_EQ(record.message.find("packed "), 0u) << record.message;
  EXPECT_EQ(record.message.find("packed 0 launches"), std::string::npos)
      << record.message;
  EXPECT_NE(record.message.find("format hsaco"), std::string::npos)
      << record.message;
}

TEST_F(RocmEvaluatorTest, CreateEvaluatorPicksTheGpuPathForRocm) {
  EXPECT_TRUE(createEvaluatorPicksTheGpuPath());
}

} // namespace

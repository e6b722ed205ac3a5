//===- CudaRunnerTest.cpp - CUDA runner and GPU evaluation without a GPU --===//
//
// What can be checked on a machine without a GPU: launch parameters packed
// from GpuLaunchArgument, a missing driver or device reported as such (in
// child processes: CUDA state, even a failed load, stays out of the test
// process), and the GPU evaluator's records when building or running fails.
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtils.h"

// The binary file between a build child and its measuring child is private
// to lib/Measure.
#include "../../lib/Measure/GpuBinaryFile.h"
#include "ke/Runtime/TensorMapEncoding.h"

#include "ke/Runtime/ChildProcess.h"
#include "ke/Runtime/CudaRunner.h"
#include "ke/Measure/GpuEvaluator.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <cstring>
#include <csignal>
#include <fcntl.h>
#include <unistd.h>

using namespace ke;
using ke::testing::IRTest;

namespace {

GpuLaunchArgument field(unsigned buffer, unsigned index) {
  GpuLaunchArgument a;
  a.kind = GpuLaunchArgument::Kind::BufferField;
  a.buffer = buffer;
  a.field = index;
  return a;
}

GpuLaunchArgument constant(GpuLaunchArgument::Kind kind, int64_t value) {
  GpuLaunchArgument a;
  a.kind = kind;
  a.value = value;
  return a;
}

TEST(LaunchParametersTest, MemrefDescriptorsAndCapturedConstants) {
  // A kernel outlined from a 2-d memref and a 1-d memref, then the values
  // outlining captured: MLIR's expanded descriptor order (allocated,
  // aligned, offset, sizes, strides) per memref.
  GpuLaunch launch;
  launch.kernelName = "kernel_0";
  for (unsigned f = 0; f < 7; ++f)
    launch.arguments.push_back(field(0, f));
  for (unsigned f = 0; f < 5; ++f)
    launch.arguments.push_back(field(1, f));
  float scale = 0.5f;
  uint32_t scaleBits;
  std::memcpy(&scaleBits, &scale, 4);
  double big = 2.25;
  int64_t bigBits;
  std::memcpy(&bigBits, &big, 8);
  launch.arguments.push_back(constant(GpuLaunchArgument::Kind::Index, 256));
  launch.arguments.push_back(constant(GpuLaunchArgument::Kind::F32, scaleBits));
  launch.arguments.push_back(constant(GpuLaunchArgument::Kind::I32, -3));
  launch.arguments.push_back(constant(GpuLaunchArgument::Kind::F64, bigBits));

  llvm::SmallVector<int64_t> shapeA = {24, 36}, shapeB = {7};
  llvm::SmallVector<DeviceBufferRef> buffers = {{0x7000000000, shapeA},
                                                {0x7000100000, shapeB}};
  llvm::Expected<LaunchParameters> packed =
      packLaunchArguments(launch, buffers);
  ASSERT_TRUE(bool(packed)) << llvm::toString(packed.takeError());
  ASSERT_EQ(packed->size(), 16u);
  llvm::SmallVector<uint64_t> expected = {
      0x7000000000, 0x7000000000, 0, 24, 36, 36, 1, // A: rank 2
      0x7000100000, 0x7000100000, 0, 7, 1};         // B: rank 1
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(packed->getSlot(i), expected[i]) << "parameter " << i;
    EXPECT_EQ(packed->getSizeInBytes(i), 8u);
  }
  EXPECT_EQ(packed->getSlot(12), 256u);
  // 32-bit values: 4 bytes at the start of their slot.
  EXPECT_EQ(packed->getSizeInBytes(13), 4u);
  float readScale;
  std::memcpy(&readScale, packed->data()[13], 4);
  EXPECT_EQ(readScale, 0.5f);
  int32_t readInt;
  std::memcpy(&readInt, packed->data()[14], 4);
  EXPECT_EQ(readInt, -3);
  double readBig;
  std::memcpy(&readBig, packed->data()[15], 8);
  EXPECT_EQ(readBig, 2.25);
  // Each pointer points at its own slot, and moving keeps them valid.
  LaunchParameters moved = std::move(*packed);
  for (size_t i = 0; i < moved.size(); ++i)
    EXPECT_EQ(*static_cast<uint64_t *>(moved.data()[i]), moved.getSlot(i));
}

TEST(LaunchParametersTest, RowMajorStridesOfHigherRanks) {
  GpuLaunch launch;
  for (unsigned f = 0; f < 3 + 2 * 4; ++f)
    launch.arguments.push_back(field(0, f));
  llvm::SmallVector<int64_t> shape = {2, 3, 4, 5};
  llvm::Expected<LaunchParameters> packed =
      packLaunchArguments(launch, {{0x1000, shape}});
  ASSERT_TRUE(bool(packed)) << llvm::toString(packed.takeError());
  llvm::SmallVector<uint64_t> tail = {2, 3, 4, 5, 60, 20, 5, 1};
  for (size_t i = 0; i < tail.size(); ++i)
    EXPECT_EQ(packed->getSlot(3 + i), tail[i]) << "field " << 3 + i;
}

TEST(LaunchParametersTest, ZeroDimensionalBuffersHaveThreeFields) {
  GpuLaunch launch;
  for (unsigned f = 0; f < 3; ++f)
    launch.arguments.push_back(field(0, f));
  llvm::Expected<LaunchParameters> packed =
      packLaunchArguments(launch, {{0x2000, {}}});
  ASSERT_TRUE(bool(packed)) << llvm::toString(packed.takeError());
  EXPECT_EQ(packed->getSlot(1), 0x2000u);
  EXPECT_EQ(packed->getSlot(2), 0u);
}

TEST(LaunchParametersTest, OutOfRangeArgumentsAreErrors) {
  llvm::SmallVector<int64_t> shape = {4, 4};
  GpuLaunch badBuffer;
  badBuffer.kernelName = "k";
  badBuffer.arguments.push_back(field(3, 0));
  llvm::Expected<LaunchParameters> packed =
      packLaunchArguments(badBuffer, {{0x1000, shape}});
  ASSERT_FALSE(bool(packed));
  EXPECT_NE(llvm::toString(packed.takeError()).find("names buffer #3"),
            std::string::npos);

  GpuLaunch badField;
  badField.kernelName = "k";
  badField.arguments.push_back(field(0, 7));
  packed = packLaunchArguments(badField, {{0x1000, shape}});
  ASSERT_FALSE(bool(packed));
  EXPECT_NE(llvm::toString(packed.takeError()).find("has 7 fields"),
            std::string::npos);
}

TEST(LaunchParametersTest, ScratchFieldsComeFromTheScratchBuffers) {
  // Launch 1 writes 256 per-block partials into scratch #0, launch 2 reads
  // them: both name the scratch descriptor, not an argument's.
  std::vector<int64_t> partials = {256};
  GpuLaunch launch;
  launch.kernelName = "k";
  launch.arguments.push_back(field(0, 1));
  for (unsigned f = 0; f < 5; ++f) {
    GpuLaunchArgument a;
    a.kind = GpuLaunchArgument::Kind::ScratchField;
    a.buffer = 0;
    a.field = f;
    launch.arguments.push_back(a);
  }
  llvm::SmallVector<int64_t> shape = {4096};
  llvm::Expected<LaunchParameters> packed =
      packLaunchArguments(launch, {{0x1000, shape}}, {{0x9000, partials}});
  ASSERT_TRUE(bool(packed)) << llvm::toString(packed.takeError());
  ASSERT_EQ(packed->size(), 6u);
  EXPECT_EQ(packed->getSlot(0), 0x1000u);
  EXPECT_EQ(packed->getSlot(1), 0x9000u); // allocated
  EXPECT_EQ(packed->getSlot(2), 0x9000u); // aligned
  EXPECT_EQ(packed->getSlot(3), 0u);      // offset
  EXPECT_EQ(packed->getSlot(4), 256u);    // size
  EXPECT_EQ(packed->getSlot(5), 1u);      // stride

  // No scratch buffer: an error naming it.
  packed = packLaunchArguments(launch, {{0x1000, shape}});
  ASSERT_FALSE(bool(packed));
  EXPECT_NE(llvm::toString(packed.takeError()).find("names scratch buffer #0"),
            std::string::npos);
}

TEST(LaunchParametersTest, TensorMapsArePassedByValue) {
  // A TMA kernel names a tensor map of argument #1 and one of scratch #0:
  // each is encoded over its buffer's address and passed as 128 bytes.
  GpuLaunch launch;
  launch.kernelName = "k";
  launch.arguments.push_back(field(0, 1));
  GpuLaunchArgument map;
  map.kind = GpuLaunchArgument::Kind::TensorMap;
  map.buffer = 0;
  launch.arguments.push_back(map);
  map.buffer = 1;
  launch.arguments.push_back(map);
  std::vector<GpuTensorMap> maps(2);
  maps[0].buffer = 1;
  maps[0].shape = {64, 128};
  maps[0].box = {64, 64};
  maps[1].scratch = true;
  maps[1].shape = {256};
  maps[1].box = {256};
  llvm::SmallVector<int64_t> shape = {64, 128};
  std::vector<int64_t> partials = {256};
  std::vector<uint64_t> encodedAt;
  auto encode = [&](const GpuTensorMap &m, uint64_t address,
                    unsigned char *out) -> llvm::Error {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(out) % kTensorMapAlignment, 0u);
    encodedAt.push_back(address);
    std::memset(out, int(m.shape.size()), kTensorMapBytes);
    return llvm::Error::success();
  };
  llvm::Expected<LaunchParameters> packed = packLaunchArguments(
      launch, {{0x1000, shape}, {0x2000, shape}}, {{0x9000, partials}}, maps,
      encode);
  ASSERT_TRUE(bool(packed)) << llvm::toString(packed.takeError());
  ASSERT_EQ(packed->size(), 3u);
  EXPECT_EQ(encodedAt, (std::vector<uint64_t>{0x2000, 0x9000}));
  EXPECT_EQ(packed->getSizeInBytes(1), kTensorMapBytes);
  EXPECT_EQ(packed->getSizeInBytes(2), kTensorMapBytes);
  // The parameter pointers point at the encoded bytes, which survive a
  // move of the parameters.
  LaunchParameters moved = std::move(*packed);
  EXPECT_EQ(static_cast<unsigned char *>(moved.data()[1])[127], 2);
  EXPECT_EQ(static_cast<unsigned char *>(moved.data()[2])[0], 1);

  // Without an encoder (HIP, an old driver), or naming a map the module
  // does not have: errors that say so.
  packed = packLaunchArguments(launch, {{0x1000, shape}, {0x2000, shape}},
                               {{0x9000, partials}}, maps);
  ASSERT_FALSE(bool(packed));
  EXPECT_NE(llvm::toString(packed.takeError()).find("TMA tensor maps"),
            std::string::npos);
  packed = packLaunchArguments(launch, {{0x1000, shape}, {0x2000, shape}},
                               {{0x9000, partials}}, {maps[0]}, encode);
  ASSERT_FALSE(bool(packed));
  EXPECT_NE(llvm::toString(packed.takeError()).find("names tensor map #1"),
            std::string::npos);
}

TEST(TensorMapEncodingTest, DriverArgumentsAreInnermostFirst) {
  // A [batch][rows][cols] bf16 buffer copied in 1 x 128 x 64 boxes: the
  // driver gets dims (cols, rows, batch), byte strides of the outer two,
  // the box reversed, unit element strides, the 128-byte swizzle (3), L2
  // promotion 256 bytes (3) and zero fill (0).
  struct Seen {
    int dataType = -1, swizzle = -1, l2 = -1, fill = -1;
    uint32_t rank = 0;
    void *address = nullptr;
    uint64_t dims[5] = {}, strides[5] = {};
    uint32_t box[5] = {}, elementStrides[5] = {};
  };
  static Seen seen;
  auto fake = [](void *, int dataType, uint32_t rank, void *address,
                 const uint64_t *dims, const uint64_t *strides,
                 const uint32_t *box, const uint32_t *elementStrides, int,
                 int swizzle, int l2, int fill) -> int {
    seen.dataType = dataType;
    seen.rank = rank;
    seen.address = address;
    for (uint32_t i = 0; i < rank; ++i) {
      seen.dims[i] = dims[i];
      seen.box[i] = box[i];
      seen.elementStrides[i] = elementStrides[i];
      if (i + 1 < rank)
        seen.strides[i] = strides[i];
    }
    seen.swizzle = swizzle;
    seen.l2 = l2;
    seen.fill = fill;
    return 0;
  };
  alignas(64) unsigned char out[128];
  int64_t shape[] = {2, 200, 72}, box[] = {1, 128, 64};
  EXPECT_EQ(ke_encode_tensor_map(fake, out, 9, 2, 3, shape, box, 128, 0x4000),
            0);
  EXPECT_EQ(seen.dataType, 9);
  EXPECT_EQ(seen.rank, 3u);
  EXPECT_EQ(seen.address, reinterpret_cast<void *>(0x4000));
  EXPECT_EQ(std::vector<uint64_t>(seen.dims, seen.dims + 3),
            (std::vector<uint64_t>{72, 200, 2}));
  EXPECT_EQ(std::vector<uint64_t>(seen.strides, seen.strides + 2),
            (std::vector<uint64_t>{144, 28800}));
  EXPECT_EQ(std::vector<uint32_t>(seen.box, seen.box + 3),
            (std::vector<uint32_t>{64, 128, 1}));
  EXPECT_EQ(seen.elementStrides[2], 1u);
  EXPECT_EQ(seen.swizzle, 3);
  EXPECT_EQ(seen.l2, 3);
  EXPECT_EQ(seen.fill, 0);
  // Ranks and swizzles ke does not make are refused before the driver.
  int64_t six[] = {1, 1, 1, 1, 1, 1};
  EXPECT_NE(ke_encode_tensor_map(fake, out, 9, 2, 6, six, six, 128, 0), 0);
  EXPECT_NE(ke_encode_tensor_map(fake, out, 9, 2, 3, shape, box, 64, 0), 0);
}

/// Runs openCudaDevice in a child with $KE_CUDA_LIBRARY set to `library` (left
/// as it is when null); returns its error message, or "opened <name>".
std::string openInChild(const char *library) {
  return ke::testing::openDeviceInChild(openCudaDevice, "KE_CUDA_LIBRARY",
                                        library);
}

TEST(CudaDeviceTest, MissingDriverLibraryIsReported) {
  std::string message = openInChild("/nonexistent/libcuda.so.1");
  EXPECT_EQ(message.find("no CUDA driver (/nonexistent/libcuda.so.1 not "
                         "found"),
            0u)
      << message;
}

TEST(CudaDeviceTest, ThisMachineHasADeviceOrSaysWhyNot) {
  std::string message = openInChild(nullptr);
  // Either this machine has a GPU, or the message says what is missing.
  EXPECT_TRUE(llvm::StringRef(message).starts_with("opened ") ||
              llvm::StringRef(message).starts_with("no CUDA driver") ||
              llvm::StringRef(message).starts_with("no CUDA device"))
      << message;
}

TEST(CudaDeviceTest, StubDriverHasNoDevice) {
  // The CUDA toolkit's link stub exports every symbol but initializes
  // nothing: the runner must report it, not crash.
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!llvm::sys::fs::exists(stub))
    GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  std::string message = openInChild(stub);
  EXPECT_EQ(message.find("no CUDA device"), 0u) << message;
}

TEST(CudaDeviceTest, ProbeRunsInAChildAndReportsTheMissingDriver) {
  setenv("KE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  llvm::Expected<CudaDeviceInfo> info = probeCudaDevice(0, 60);
  unsetenv("KE_CUDA_LIBRARY");
  ASSERT_FALSE(bool(info));
  EXPECT_NE(llvm::toString(info.takeError()).find("no CUDA driver"),
            std::string::npos);
}

TEST(CudaDeviceTest, DeviceInfoRoundTripsThroughJSON) {
  CudaDeviceInfo info;
  info.ordinal = 1;
  info.name = "NVIDIA H200";
  info.computeMajor = 9;
  info.multiprocessors = 132;
  info.l2CacheBytes = 60ull << 20;
  info.totalMemoryBytes = 141ull << 30;
  info.driverVersion = 13000;
  info.l2FlushKernelError = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  llvm::Expected<CudaDeviceInfo> back = CudaDeviceInfo::fromJSON(info.toJSON());
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->getChip(), "sm_90");
  EXPECT_EQ(back->name, info.name);
  EXPECT_EQ(back->l2CacheBytes, info.l2CacheBytes);
  EXPECT_EQ(back->totalMemoryBytes, info.totalMemoryBytes);
  // The probe's child says why the flush kernel did not load; the parent
  // warns.
  EXPECT_EQ(back->l2FlushKernelError, info.l2FlushKernelError);
}

/// A script doing nothing (the GPU builders below decide what happens).
constexpr llvm::StringLiteral kEmptyScript = R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.yield
  }
})mlir";

class GpuEvaluatorTest : public ke::testing::GpuEvaluatorTestBase {
protected:
  GpuEvaluatorTest() : GpuEvaluatorTestBase("cuda:sm_90", 30) {}

  Schedule schedule() {
    Schedule s;
    s.rule = &rule;
    return s;
  }

  const TargetDescription &cuda = target;
  ke::testing::FixedScriptRule rule{kEmptyScript.str(), "test.empty"};
};

TEST_F(GpuEvaluatorTest, ReferenceRunsOnTheCpu) {
  std::unique_ptr<GpuEvaluator> evaluator =
      evaluatorFor(getDefaultGpuKernelBuilder());
  ASSERT_TRUE(evaluator);
  CandidateRecord reference = evaluator->evaluateReference();
  EXPECT_EQ(reference.error, ErrorClass::None) << reference.message;
  EXPECT_GT(reference.measurement.median, 0);
  EXPECT_TRUE(evaluator->getKernelAnchor()->hasAttr(kAnchorAttr));
}

TEST_F(GpuEvaluatorTest, BuildFailuresAreCompileErrors) {
  std::unique_ptr<GpuEvaluator> evaluator =
      evaluatorFor([](mlir::ModuleOp, const TargetDescription &)
                       -> llvm::Expected<GpuKernelBinary> {
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "the test builder refuses");
      });
  ASSERT_TRUE(evaluator);
  CandidateRecord record = evaluator->evaluate(schedule());
  EXPECT_EQ(record.error, ErrorClass::CompileError);
  EXPECT_NE(record.message.find("the test builder refuses"), std::string::npos)
      << record.message;
  ASSERT_TRUE(record.schedule);
}

TEST_F(GpuEvaluatorTest, MissingDeviceIsALaunchErrorNotACrash) {
  std::unique_ptr<GpuEvaluator> evaluator =
      evaluatorFor([](mlir::ModuleOp, const TargetDescription &)
                       -> llvm::Expected<GpuKernelBinary> {
        GpuKernelBinary binary;
        binary.format = "ptx";
        binary.image = "// not really PTX";
        return binary;
      });
  ASSERT_TRUE(evaluator);
  // The child inherits the environment: no driver, whatever the machine.
  setenv("KE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  CandidateRecord record = evaluator->evaluate(schedule());
  unsetenv("KE_CUDA_LIBRARY");
  EXPECT_EQ(record.error, ErrorClass::LaunchError);
  EXPECT_NE(record.message.find("no CUDA driver"), std::string::npos)
      << record.message;
}

/// A builder that names its process in `dir` (a file named by its pid),
/// then waits up to `waitSeconds` until `count` of the processes named
/// there are alive at once, and fails with "together" when they were (the
/// builds ran at the same time), else "alone".
static GpuKernelBuilder rendezvousBuilder(std::string dir, unsigned count,
                                          double waitSeconds) {
  return [=](mlir::ModuleOp, const TargetDescription &)
             -> llvm::Expected<GpuKernelBinary> {
    std::string mine = dir + "/" + std::to_string(getpid());
    close(open(mine.c_str(), O_CREAT | O_WRONLY, 0600));
    for (int tries = 0; tries < int(waitSeconds * 100); ++tries) {
      unsigned alive = 0;
      std::error_code ec;
      for (llvm::sys::fs::directory_iterator it(dir, ec), end;
           it != end && !ec; it.increment(ec)) {
        int pid = std::atoi(llvm::sys::path::filename(it->path()).str().c_str());
        alive += pid > 0 && kill(pid, 0) == 0;
      }
      if (alive >= count) {
        usleep(300000); // alive long enough for the others to see it
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "together");
      }
      usleep(10000);
    }
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "alone");
  };
}

TEST_F(GpuEvaluatorTest, BatchBuildsRunInParallelChildren) {
  for (unsigned jobs : {3u, 1u}) {
    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ke-builds", dir));
    std::unique_ptr<GpuEvaluator> evaluator = evaluatorFor(
        rendezvousBuilder(std::string(dir), 3, jobs == 1 ? 0.3 : 10), jobs);
    ASSERT_TRUE(evaluator);
    std::vector<Schedule> batch(3, schedule());
    std::vector<std::string> messages;
    evaluator->evaluateBatch(
        batch, [] { return std::nullopt; },
        [&](unsigned index, CandidateRecord record) {
          EXPECT_EQ(index, messages.size());
          EXPECT_EQ(record.error, ErrorClass::CompileError);
          messages.push_back(record.message);
        });
    EXPECT_EQ(messages, std::vector<std::string>(
                            3, jobs == 1 ? "alone" : "together"))
        << jobs << " jobs";
    llvm::sys::fs::remove_directories(dir);
  }
}

TEST_F(GpuEvaluatorTest, BatchRecordsComeInOrderWithTheirScripts) {
  // A valid schedule lowered to a binary that goes through its file to the
  // measuring child (which stops at the missing device), an unparsable
  // script, and the valid one again: the records come in the batch's order.
  std::unique_ptr<GpuEvaluator> evaluator =
      evaluatorFor(getDefaultGpuKernelBuilder(), 2);
  ASSERT_TRUE(evaluator);
  mlir::FailureOr<Schedule> untuned =
      getDefaultSchedule(evaluator->getKernelAnchor(), target);
  ASSERT_TRUE(mlir::succeeded(untuned));
  ke::testing::FixedScriptRule garbage{"not a transform script", "test.bad"};
  Schedule bad;
  bad.rule = &garbage;
  std::vector<Schedule> batch = {*untuned, bad, *untuned};
  std::vector<CandidateRecord> records;
  unsigned asked = 0;
  setenv("KE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  evaluator->evaluateBatch(
      batch,
      [&]() -> std::optional<double> {
        ++asked;
        return std::nullopt;
      },
      [&](unsigned index, CandidateRecord record) {
        EXPECT_EQ(index, records.size());
        records.push_back(std::move(record));
      });
  unsetenv("KE_CUDA_LIBRARY");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].error, ErrorClass::LaunchError) << records[0].message;
  EXPECT_NE(records[0].message.find("no CUDA driver"), std::string::npos)
      << records[0].message;
  EXPECT_EQ(records[1].error, ErrorClass::InvalidSchedule);
  EXPECT_EQ(records[1].script, "not a transform script");
  EXPECT_EQ(records[2].error, ErrorClass::LaunchError) << records[2].message;
  EXPECT_EQ(records[0].script, records[2].script);
  EXPECT_FALSE(records[0].script.empty());
  // The best time is asked for each candidate that is measured.
  EXPECT_EQ(asked, 2u);
}

TEST(GpuBinaryFileTest, RoundTripsEveryField) {
  GpuKernelBinary binary;
  binary.format = "cubin";
  binary.image = std::string("\x7f" "ELF\0\x01\xff", 7);
  binary.assembly = ".version 8.0";
  binary.assemblerLog = "ptxas info: 40 registers";
  binary.registers = 40;
  binary.spillStoreBytes = 8;
  binary.spillLoadBytes = 16;
  GpuLaunch launch;
  launch.kernelName = "k0";
  launch.grid = {3, 2, 1};
  launch.block = {128, 1, 1};
  launch.dynamicSharedMemoryBytes = 98304;
  launch.arguments = {
      {GpuLaunchArgument::Kind::BufferField, 2, 1, 0},
      {GpuLaunchArgument::Kind::Index, 0, 0, -5},
      {GpuLaunchArgument::Kind::ScratchField, 0, 3, 0},
      {GpuLaunchArgument::Kind::F64, 0, 0, int64_t(0x3ff0000000000000)},
      {GpuLaunchArgument::Kind::TensorMap, 0, 0, 0}};
  binary.launches = {launch, launch};
  binary.scratch = {{{4, 5}, 80}};
  GpuTensorMap map;
  map.scratch = true;
  map.buffer = 0;
  map.dataType = 9;
  map.elementBytes = 2;
  map.shape = {4, 5};
  map.box = {4, 1};
  map.swizzleBytes = 128;
  binary.tensorMaps = {map};
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("ke-binary", "json", path));
  ASSERT_FALSE(bool(writeGpuKernelBinary(path, binary)));
  llvm::Expected<GpuKernelBinary> read = readGpuKernelBinary(path);
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  EXPECT_EQ(read->format, binary.format);
  EXPECT_EQ(read->image, binary.image);
  EXPECT_EQ(read->assembly, binary.assembly);
  EXPECT_EQ(read->assemblerLog, binary.assemblerLog);
  EXPECT_EQ(read->registers, 40u);
  EXPECT_EQ(read->spillStoreBytes, 8u);
  EXPECT_EQ(read->spillLoadBytes, 16u);
  ASSERT_EQ(read->launches.size(), 2u);
  const GpuLaunch &l = read->launches[1];
  EXPECT_EQ(l.kernelName, "k0");
  EXPECT_EQ(l.grid, launch.grid);
  EXPECT_EQ(l.block, launch.block);
  EXPECT_EQ(l.dynamicSharedMemoryBytes, 98304u);
  ASSERT_EQ(l.arguments.size(), 5u);
  for (unsigned i = 0; i < 5; ++i) {
    EXPECT_EQ(l.arguments[i].kind, launch.arguments[i].kind);
    EXPECT_EQ(l.arguments[i].buffer, launch.arguments[i].buffer);
    EXPECT_EQ(l.arguments[i].field, launch.arguments[i].field);
    EXPECT_EQ(l.arguments[i].value, launch.arguments[i].value);
  }
  ASSERT_EQ(read->scratch.size(), 1u);
  EXPECT_EQ(read->scratch[0].shape, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(read->scratch[0].bytes, 80u);
  ASSERT_EQ(read->tensorMaps.size(), 1u);
  const GpuTensorMap &m = read->tensorMaps[0];
  EXPECT_TRUE(m.scratch);
  EXPECT_EQ(m.buffer, 0u);
  EXPECT_EQ(m.dataType, 9u);
  EXPECT_EQ(m.elementBytes, 2u);
  EXPECT_EQ(m.shape, map.shape);
  EXPECT_EQ(m.box, map.box);
  EXPECT_EQ(m.swizzleBytes, 128u);
  // A truncated file is an error, not a binary.
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    out << "{\"format\": \"cubin\"";
  }
  llvm::Expected<GpuKernelBinary> truncated = readGpuKernelBinary(path);
  EXPECT_FALSE(bool(truncated));
  llvm::consumeError(truncated.takeError());
  llvm::sys::fs::remove(path);
}

TEST_F(GpuEvaluatorTest, DefaultScheduleLowersAndStopsAtTheMissingDevice) {
  // The whole candidate path up to the device: the GPU sketch's default
  // schedule applies, the NVPTX lowering produces a binary, and only opening
  // the device fails (no driver here, whatever the machine).
  CandidateRecord record =
      evaluateWithout("KE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
  EXPECT_EQ(record.error, ErrorClass::LaunchError) << record.message;
  EXPECT_NE(record.message.find("no CUDA driver"), std::string::npos)
      << record.message;
}

TEST_F(GpuEvaluatorTest, LoweredLaunchesPackAgainstTheKernelBuffers) {
  // The launches the NVPTX lowering reads off the host function name only
  // buffers and descriptor fields the kernel module has.
  CandidateRecord record = evaluateUntuned(packingBuilder());
  EXPECT_EQ(record.error, ErrorClass::CompileError);
  EXPECT_EQ(record.message.find("packed "), 0u) << record.message;
  EXPECT_EQ(record.message.find("packed 0 launches"), std::string::npos)
      << record.message;
}

TEST_F(GpuEvaluatorTest, DeviceReferenceWithoutADeviceIsAnError) {
  // --reference=device: the reference lowers to plain-loop launches, and
  // opening the device (no driver here, whatever the machine) fails the
  // evaluator with a diagnostic that says why; no CPU reference runs.
  Workload w = onlyWorkload(R"mlir(
func.func @f(%a: tensor<24x20xf32>, %b: tensor<20x36xf32>, %c: tensor<24x36xf32>) -> tensor<24x36xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<24x20xf32>, tensor<20x36xf32>) outs(%c : tensor<24x36xf32>) -> tensor<24x36xf32>
  return %r : tensor<24x36xf32>
})mlir");
  std::string message;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    message += d.str();
    return mlir::success();
  });
  EvaluatorOptions options;
  options.timeoutSeconds = 30;
  options.reference = ReferencePlace::Device;
  setenv("KE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  mlir::FailureOr<std::unique_ptr<GpuEvaluator>> evaluator =
      GpuEvaluator::create(w.firstOp, cuda, options);
  unsetenv("KE_CUDA_LIBRARY");
  EXPECT_TRUE(mlir::failed(evaluator));
  EXPECT_NE(message.find("the device reference failed: launch-error"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("no CUDA driver"), std::string::npos) << message;
}

TEST_F(GpuEvaluatorTest, CreateEvaluatorPicksTheGpuPathForCuda) {
  EXPECT_TRUE(createEvaluatorPicksTheGpuPath());
}

} // namespace

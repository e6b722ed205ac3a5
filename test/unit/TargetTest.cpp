//===- TargetTest.cpp - Parsing target strings ----------------------------===//

#include "ke/Target/Target.h"

#include "gtest/gtest.h"

using namespace ke;

namespace {

TargetDescription parseOrFail(llvm::StringRef spec) {
  llvm::Expected<TargetDescription> target = parseTarget(spec);
  if (!target) {
    ADD_FAILURE() << spec.str() << ": " << llvm::toString(target.takeError());
    return {};
  }
  return *target;
}

std::string errorOf(llvm::StringRef spec) {
  llvm::Expected<TargetDescription> target = parseTarget(spec);
  if (target) {
    ADD_FAILURE() << spec.str() << " parsed but should not";
    return "";
  }
  return llvm::toString(target.takeError());
}

TEST(TargetTest, HostCpu) {
  TargetDescription host = parseOrFail("cpu");
  EXPECT_TRUE(host.isCpu());
  EXPECT_TRUE(host.detectedFromHost);
  EXPECT_EQ(host.name, "cpu");
  EXPECT_GE(host.cpu.cores, 1u);
  EXPECT_GE(host.cpu.vectorBits, 128u);
  EXPECT_GT(host.cpu.l1dBytes, 0u);
  EXPECT_FALSE(host.triple.empty());
  EXPECT_FALSE(host.chip.empty());
  EXPECT_EQ(parseOrFail("cpu:native").triple, host.triple);
}

TEST(TargetTest, X86Levels) {
  TargetDescription v3 = parseOrFail("cpu:x86-64-v3");
  EXPECT_EQ(v3.name, "cpu:x86-64-v3");
  EXPECT_EQ(v3.chip, "x86-64-v3");
  EXPECT_EQ(v3.cpu.vectorBits, 256u);
  EXPECT_NE(v3.features.find("+avx2"), std::string::npos);
  EXPECT_EQ(llvm::StringRef(v3.triple).split('-').first, "x86_64");
  EXPECT_EQ(parseOrFail("cpu:x86-64-v4").cpu.vectorBits, 512u);
  EXPECT_EQ(parseOrFail("cpu:x86-64").cpu.vectorBits, 128u);
}

TEST(TargetTest, A64fx) {
  TargetDescription t = parseOrFail("cpu:a64fx");
  EXPECT_EQ(t.triple, "aarch64-unknown-linux-gnu");
  EXPECT_EQ(t.chip, "a64fx");
  EXPECT_EQ(t.cpu.cores, 48u);
  EXPECT_EQ(t.cpu.vectorBits, 512u);
  EXPECT_FALSE(t.cpu.scalableVectors);
  EXPECT_EQ(t.cpu.l1dBytes, 64u * 1024);
  EXPECT_EQ(t.cpu.l2Bytes, 8u * 1024 * 1024);
  EXPECT_EQ(t.cpu.l2SharedByCores, 12u);
  EXPECT_TRUE(parseOrFail("cpu:aarch64").cpu.scalableVectors);
}

TEST(TargetTest, Cuda) {
  TargetDescription t = parseOrFail("cuda:sm_90");
  EXPECT_TRUE(t.isGpu());
  EXPECT_EQ(t.family, TargetFamily::Cuda);
  EXPECT_EQ(t.triple, "nvptx64-nvidia-cuda");
  EXPECT_EQ(t.chip, "sm_90");
  EXPECT_EQ(t.features, "+ptx80"); // sm_90 needs PTX >= 7.8
  EXPECT_EQ(t.gpu.warpSize, 32u);
  EXPECT_EQ(t.gpu.multiprocessors, 132u);
  EXPECT_EQ(t.gpu.maxThreadsPerBlock, 1024u);
  EXPECT_EQ(t.gpu.sharedMemoryPerBlockBytes, 227u * 1024);
  EXPECT_EQ(t.gpu.maxRegistersPerThread, 255u);
  EXPECT_EQ(parseOrFail("cuda:sm_80").gpu.sharedMemoryPerBlockBytes,
            163u * 1024);
}

TEST(TargetTest, Rocm) {
  for (llvm::StringRef spec : {"rocm:gfx90a", "rocm:gfx942"}) {
    TargetDescription t = parseOrFail(spec);
    EXPECT_EQ(t.family, TargetFamily::Rocm);
    EXPECT_EQ(t.triple, "amdgcn-amd-amdhsa");
    EXPECT_EQ(t.gpu.warpSize, 64u) << spec.str();
    EXPECT_EQ(t.gpu.sharedMemoryPerBlockBytes, 64u * 1024);
  }
  EXPECT_EQ(parseOrFail("rocm:gfx942").gpu.multiprocessors, 304u);
}

TEST(TargetTest, UnknownTargetsListTheValidForms) {
  for (llvm::StringRef bad : {"gpu", "cuda", "cuda:", "cuda:sm_91",
                              "cpu:pentium", "cpu:", "rocm:gfx1", "", "CPU",
                              "cuda:sm_90:extra"}) {
    std::string message = errorOf(bad);
    EXPECT_NE(message.find("unknown target '" + bad.str() + "'"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("cuda:<sm>"), std::string::npos) << message;
    EXPECT_NE(message.find("sm_90"), std::string::npos) << message;
    EXPECT_NE(message.find("gfx942"), std::string::npos) << message;
    EXPECT_NE(message.find("a64fx"), std::string::npos) << message;
  }
}

TEST(TargetTest, JsonHasTheFieldsOfItsFamily) {
  llvm::json::Value cpu = toJSON(parseOrFail("cpu:a64fx"));
  EXPECT_EQ(cpu.getAsObject()->getInteger("cores"), 48);
  EXPECT_FALSE(cpu.getAsObject()->get("warp_size"));
  llvm::json::Value gpu = toJSON(parseOrFail("rocm:gfx90a"));
  EXPECT_EQ(gpu.getAsObject()->getInteger("warp_size"), 64);
  EXPECT_FALSE(gpu.getAsObject()->get("cores"));
}

} // namespace

//===- PipelineHashTest.cpp - Pipeline hashes follow what runs ------------===//
//
// A tuning record is applied only under the pipeline hash it was made with,
// so the hash must change whenever the lowering does. These tests check that
// the GPU hash covers every step the lowering runs (the three that a
// hand-written list once missed among them) and that removing any one step
// changes it.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/CpuPipeline.h"
#include "ke/Codegen/GpuPipeline.h"
#include "ke/Codegen/PipelineHash.h"
#include "ke/Target/Target.h"

#include "gtest/gtest.h"

using namespace ke;

namespace {

TargetDescription parseOrDie(llvm::StringRef spec) {
  llvm::Expected<TargetDescription> target = parseTarget(spec);
  if (!target) {
    ADD_FAILURE() << llvm::toString(target.takeError());
    return {};
  }
  return *target;
}

/// The top-level steps of a pipeline text: commas outside braces split.
std::vector<std::string> splitSteps(llvm::StringRef text) {
  std::vector<std::string> steps(1);
  int depth = 0;
  for (char c : text) {
    depth += c == '{' || c == '(';
    depth -= c == '}' || c == ')';
    if (c == ',' && depth == 0)
      steps.emplace_back();
    else
      steps.back() += c;
  }
  return steps;
}

std::string joinSteps(const std::vector<std::string> &steps) {
  std::string text;
  for (const std::string &step : steps)
    text += (text.empty() ? "" : ",") + step;
  return text;
}

TEST(PipelineHashTest, GpuTextNamesEveryStep) {
  std::string cuda = getGpuPipelineText(parseOrDie("cuda:sm_90"));
  std::string rocm = getGpuPipelineText(parseOrDie("rocm:gfx942"));
  for (llvm::StringRef step :
       {"ke-gpu-transpose-shared-tiles", "ke-gpu-hoist-accumulator-tiles",
        "ke-gpu-launch-host-combines",
        "ke-gpu-combine-partials",
        "ke-gpu-check-mapped", "gpu-kernel-outlining", "ke-gpu-merge-modules",
        "ke-gpu-allocs-to-attributions", "ke-gpu-hoist-barriers"}) {
    EXPECT_NE(cuda.find(step.str()), std::string::npos) << step.str();
    EXPECT_NE(rocm.find(step.str()), std::string::npos) << step.str();
  }
  // CUDA-only steps appear only in CUDA's text.
  EXPECT_NE(cuda.find("ke-gpu-annotate-vector-alignment"), std::string::npos);
  EXPECT_EQ(rocm.find("ke-gpu-annotate-vector-alignment"), std::string::npos);
  EXPECT_NE(cuda.find("ke-gpu-align-kernel-pointers"), std::string::npos);
  EXPECT_EQ(rocm.find("ke-gpu-align-kernel-pointers"), std::string::npos);
  EXPECT_NE(cuda.find("convert-gpu-to-nvvm"), std::string::npos);
  EXPECT_NE(rocm.find("convert-gpu-to-rocdl"), std::string::npos);
}

TEST(PipelineHashTest, GpuHashIsTheHashOfTheText) {
  for (llvm::StringRef spec : {"cuda:sm_90", "rocm:gfx942"}) {
    TargetDescription generic = parseOrDie(spec);
    generic.chip = "chip";
    EXPECT_EQ(getGpuPipelineHash(parseOrDie(spec)),
              hashLoweringPipeline(getGpuPipelineText(generic)));
  }
  // The family is part of the hash (the chip is not, but its PTX features
  // are: sm_80 and sm_90 differ in them).
  EXPECT_NE(getGpuPipelineHash(parseOrDie("cuda:sm_90")),
            getGpuPipelineHash(parseOrDie("rocm:gfx942")));
}

TEST(PipelineHashTest, RemovingAnyStepChangesTheHash) {
  TargetDescription generic = parseOrDie("cuda:sm_90");
  generic.chip = "chip";
  std::vector<std::string> steps = splitSteps(getGpuPipelineText(generic));
  ASSERT_GT(steps.size(), 10u);
  std::string hash = getGpuPipelineHash(parseOrDie("cuda:sm_90"));
  for (size_t i = 0; i < steps.size(); ++i) {
    std::vector<std::string> fewer = steps;
    fewer.erase(fewer.begin() + i);
    EXPECT_NE(hashLoweringPipeline(joinSteps(fewer)), hash)
        << "without " << steps[i];
  }
  // An option of a step counts too.
  std::string text = joinSteps(steps);
  size_t at = text.find("full-unroll=true");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 16, "full-unroll=false");
  EXPECT_NE(hashLoweringPipeline(text), hash);
}

TEST(PipelineHashTest, SourcesAreHashed) {
  // A SHA-256 in hex, from cmake/LoweringSourceHash.cmake.
  EXPECT_EQ(getLoweringSourceHash().size(), 64u);
  EXPECT_NE(getCpuPipelineHash(), hashLoweringPipeline(""));
}

} // namespace

//===- FeaturesTest.cpp - Cost-model features of scheduled candidates -----===//

#include "TestUtils.h"

#include "ke/Schedule/Schedule.h"
#include "ke/Search/CostModel.h"
#include "ke/Search/Features.h"
#include "ke/Workload/Kernel.h"

#include "llvm/ADT/StringSet.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

using namespace ke;
using ke::testing::IRTest;

namespace {

const char *kMatmul = R"mlir(
func.func @f(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>, %c: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
})mlir";

const char *kIrregularMatmul = R"mlir(
func.func @f(%a: tensor<37x29xf32>, %b: tensor<29x53xf32>, %c: tensor<37x53xf32>) -> tensor<37x53xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<37x29xf32>, tensor<29x53xf32>) outs(%c : tensor<37x53xf32>) -> tensor<37x53xf32>
  return %r : tensor<37x53xf32>
})mlir";

const char *kConv = R"mlir(
func.func @f(%i: tensor<1x10x10x8xf32>, %f: tensor<3x3x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%i, %f : tensor<1x10x10x8xf32>, tensor<3x3x8x16xf32>) outs(%c : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  return %r : tensor<1x8x8x16xf32>
})mlir";

const char *kSoftmax = R"mlir(
func.func @f(%x: tensor<128x256xf32>, %o: tensor<128x256xf32>) -> tensor<128x256xf32> {
  %r = linalg.softmax dimension(1) ins(%x : tensor<128x256xf32>) outs(%o : tensor<128x256xf32>) -> tensor<128x256xf32>
  return %r : tensor<128x256xf32>
})mlir";

const char *kRowSum = R"mlir(
func.func @f(%x: tensor<8x4096xf32>, %o: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.reduce ins(%x : tensor<8x4096xf32>) outs(%o : tensor<8xf32>) dimensions = [1]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<8xf32>
})mlir";

const char *kGlobalSum = R"mlir(
func.func @f(%x: tensor<4096xf32>, %o: tensor<f32>) -> tensor<f32> {
  %r = linalg.reduce ins(%x : tensor<4096xf32>) outs(%o : tensor<f32>) dimensions = [0]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
})mlir";

class FeaturesTest : public IRTest {
protected:
  /// A fixed 4-core AVX2-like machine, so expected values do not depend on
  /// the host: 8 f32 lanes, 16 vector registers, 32 KiB L1D, 1 MiB L2.
  static TargetDescription target() {
    TargetDescription t;
    t.name = "cpu:test";
    t.triple = "x86_64-unknown-linux-gnu";
    t.cpu.cores = 4;
    t.cpu.vectorBits = 256;
    t.cpu.l1dBytes = 32 * 1024;
    t.cpu.l2Bytes = 1024 * 1024;
    return t;
  }

  /// The kernel anchor of the single workload of `source`.
  mlir::Operation *anchorOf(const char *source) {
    Workload w = onlyWorkloadAnchor(source);
    mlir::FailureOr<KernelModule> k = buildKernelModule(w.firstOp);
    EXPECT_TRUE(mlir::succeeded(k));
    if (mlir::failed(k))
      return nullptr;
    kernels.push_back(std::move(k->module));
    return findKernelAnchor(*kernels.back());
  }

  /// The last workload of `source` (fills come first).
  Workload onlyWorkloadAnchor(const char *source) {
    std::vector<Workload> workloads = workloadsOf(source);
    EXPECT_FALSE(workloads.empty());
    return workloads.empty() ? Workload() : workloads.back();
  }

  /// The default schedule of the rule called `rule` for `anchor`.
  Schedule sketch(mlir::Operation *anchor, llvm::StringRef rule) {
    for (Schedule &s : getCandidateSketches(anchor, target()))
      if (s.rule->getName() == rule)
        return s;
    ADD_FAILURE() << "no sketch " << rule.str();
    return {};
  }

  static void setKnob(Schedule &s, llvm::StringRef name, int64_t value) {
    int index = s.space.find(name);
    ASSERT_GE(index, 0) << "no knob " << name.str();
    const Knob &knob = s.space.knobs[index];
    auto it = llvm::find(knob.choices, value);
    ASSERT_NE(it, knob.choices.end())
        << "knob " << name.str() << " cannot be " << value;
    s.indices[index] = it - knob.choices.begin();
  }

  /// The feature called `name` of `features`.
  static float get(const std::vector<float> &features, llvm::StringRef name) {
    const std::vector<std::string> &names = getFeatureNames();
    auto it = llvm::find(names, name.str());
    EXPECT_NE(it, names.end()) << "no feature " << name.str();
    if (it == names.end())
      return NAN;
    return features[it - names.begin()];
  }

  llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> kernels;
};

/// Equal values, NaN equal to NaN (missing features are NaN).
bool sameFeatures(const std::vector<float> &a, const std::vector<float> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))))
      return false;
  return true;
}

TEST_F(FeaturesTest, NamesAreUniqueAndMatchTheLength) {
  const std::vector<std::string> &names = getFeatureNames();
  EXPECT_EQ(names.size(), getNumFeatures());
  EXPECT_EQ(getNumFeatures(), 156u) << "update docs/cost-model.md";
  llvm::StringSet<> seen;
  for (const std::string &name : names)
    EXPECT_TRUE(seen.insert(name).second) << "duplicate feature " << name;
}

TEST_F(FeaturesTest, FixedLengthForEverySketch) {
  TargetDescription t = target();
  std::map<std::string, unsigned> sketchesSeen;
  for (const char *source :
       {kMatmul, kIrregularMatmul, kConv, kSoftmax, kRowSum, kGlobalSum}) {
    mlir::Operation *anchor = anchorOf(source);
    ASSERT_TRUE(anchor);
    llvm::SmallVector<Schedule> sketches = getCandidateSketches(anchor, t);
    ASSERT_FALSE(sketches.empty());
    Sampler sampler(1);
    for (const Schedule &base : sketches) {
      ++sketchesSeen[base.rule->getName().str()];
      for (int i = 0; i < 20; ++i) {
        Schedule s = base;
        std::optional<KnobIndices> indices = sampler.sample(s, anchor, t);
        ASSERT_TRUE(indices);
        s.indices = *indices;
        std::vector<float> features = extractFeatures(anchor, s, t);
        ASSERT_EQ(features.size(), getNumFeatures());
        // The loop nest is described: level features are known.
        EXPECT_FALSE(std::isnan(get(features, "inner.log2_iterations")))
            << base.rule->getName().str();
        EXPECT_FALSE(std::isnan(get(features, "log2_tasks")));
        EXPECT_EQ(get(features, "sketch." + base.rule->getName().str()), 1.0f);
      }
    }
  }
  // Every CPU rule was exercised.
  EXPECT_EQ(sketchesSeen.count("cpu.tile"), 1u);
  EXPECT_EQ(sketchesSeen.count("cpu.rfactor"), 1u);
  EXPECT_EQ(sketchesSeen.count("cpu.softmax"), 1u);
  EXPECT_EQ(sketchesSeen.count("cpu.loops"), 1u);
  if (t.cpu.cores > 1)
    EXPECT_EQ(sketchesSeen.count("cpu.loops.parallel"), 1u);
}

TEST_F(FeaturesTest, GpuRulesHaveSketchFlagsOfTheirOwn) {
  // gpu.mma (tensor cores) and gpu.tile (CUDA cores) both schedule a 16-bit
  // matmul on sm_90: each is its own one-hot feature, not "other".
  const char *bf16 = R"mlir(
func.func @f(%a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>, %c: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<128x64xbf16>, tensor<64x128xbf16>) outs(%c : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
})mlir";
  mlir::Operation *anchor = anchorOf(bf16);
  llvm::Expected<TargetDescription> gpu = parseTarget("cuda:sm_90");
  ASSERT_TRUE(static_cast<bool>(gpu)) << llvm::toString(gpu.takeError());
  llvm::StringSet<> seen;
  for (Schedule &s : getCandidateSketches(anchor, *gpu)) {
    std::vector<float> features = extractFeatures(anchor, s, *gpu);
    std::string flag = ("sketch." + s.rule->getName()).str();
    EXPECT_EQ(get(features, flag), 1.0f) << flag;
    EXPECT_EQ(get(features, "sketch.other"), 0.0f) << flag;
    seen.insert(s.rule->getName());
  }
  EXPECT_TRUE(seen.contains("gpu.mma"));
  EXPECT_TRUE(seen.contains("gpu.tile"));
}

TEST_F(FeaturesTest, RuleWithoutDescriptionGivesMissingLevels) {
  // The default describeLoopNest describes nothing: level features are NaN,
  // workload features are still there.
  ke::testing::FixedScriptRule rule("", "test.opaque");
  mlir::Operation *anchor = anchorOf(kMatmul);
  Schedule s;
  s.rule = &rule;
  std::vector<float> features = extractFeatures(anchor, s, target());
  ASSERT_EQ(features.size(), getNumFeatures());
  EXPECT_TRUE(std::isnan(get(features, "register.log2_tile.d0")));
  EXPECT_TRUE(std::isnan(get(features, "log2_tasks")));
  EXPECT_EQ(get(features, "sketch.other"), 1.0f);
  EXPECT_FLOAT_EQ(get(features, "log2_flops"), std::log2(2.0 * 64 * 48 * 32));
}

TEST_F(FeaturesTest, HandComputedMatmul) {
  // 64x48x32 f32 matmul: 4 outer row tiles of 16 on 4 threads, 4x16
  // register tiles, k tiles of 2 unrolled twice.
  mlir::Operation *anchor = anchorOf(kMatmul);
  Schedule s = sketch(anchor, "cpu.tile");
  setKnob(s, "threads", 4);
  setKnob(s, "forall.d0", 16);
  setKnob(s, "forall.d1", 0);
  setKnob(s, "reg.d0", 4);
  setKnob(s, "reg.d1", 16);
  setKnob(s, "kvec.d2", 2);
  setKnob(s, "unroll", 2);
  setKnob(s, "pad", 0);
  std::vector<float> f = extractFeatures(anchor, s, target());
  auto expect = [&](llvm::StringRef name, double value) {
    EXPECT_NEAR(get(f, name), value, 1e-5) << name.str();
  };
  expect("log2_flops", std::log2(2.0 * 64 * 48 * 32));
  expect("kind.contraction", 1);
  expect("kind.reduction", 0);
  expect("sketch.cpu.tile", 1);
  expect("num_loops", 3);
  expect("num_reduction_loops", 1);
  expect("log2_range.d0", 6);
  expect("log2_range.d1", std::log2(48));
  expect("is_reduction.d2", 1);
  EXPECT_TRUE(std::isnan(get(f, "log2_range.d3")));
  expect("log2_lanes", 3);
  expect("log2_cores", 2);

  // Threads: [16, 48, 32], 4 tasks.
  expect("threads.log2_tile.d0", 4);
  expect("threads.log2_tile.d1", std::log2(48));
  expect("threads.log2_trips", 2);
  expect("threads.log2_bytes.in0", std::log2(16 * 32 * 4));
  expect("threads.log2_bytes.in1", std::log2(32 * 48 * 4));
  expect("threads.log2_bytes.out", std::log2(16 * 48 * 4));
  // No cache blocks (k < 64): the cache level keeps the thread tiles.
  expect("cache.log2_tile.d2", 5);
  expect("cache.log2_trips", 0);
  // Registers: [4, 16, 32], 4 x 3 per thread tile.
  expect("register.log2_tile.d0", 2);
  expect("register.log2_tile.d1", 4);
  expect("register.log2_tile.d2", 5);
  expect("register.log2_trips", std::log2(12));
  expect("register.log2_bytes.in0", std::log2(4 * 32 * 4));
  expect("register.log2_bytes.in1", std::log2(32 * 16 * 4));
  expect("register.log2_bytes.out", std::log2(4 * 16 * 4));
  double footprint = 4 * 32 * 4 + 32 * 16 * 4 + 4 * 16 * 4;
  expect("register.log2_footprint", std::log2(footprint));
  expect("register.log2_footprint_vs_l1", std::log2(footprint / 32768));
  expect("register.log2_intensity", std::log2(2.0 * 4 * 16 * 32 / footprint));
  // Inner: [4, 16, 2], 16 per register tile.
  expect("inner.log2_tile.d2", 1);
  expect("inner.log2_trips", 4);
  expect("inner.log2_iterations", std::log2(4 * 16 * 2));
  // Parallelism.
  expect("log2_threads", 2);
  expect("threads_vs_cores", 1);
  expect("log2_tasks", 2);
  expect("log2_tasks_per_thread", 0);
  expect("load_imbalance", 1);
  expect("used_cores", 1);
  // Vectors along n: 16 elements, two vectors of 8 lanes.
  expect("log2_vector_width", 4);
  expect("vector_width_vs_lanes", 2);
  expect("vector_remainder", 0);
  expect("vector_loop_is_reduction", 0);
  expect("vector_access.in0", 0); // A[m, k] is broadcast along n
  expect("vector_access.in1", 1); // B[k, n] is read with unit stride
  expect("vector_access.out", 1);
  expect("log2_contiguous.in0", 1); // rows of kvec = 2 elements of A
  expect("log2_contiguous.in1", 4);
  expect("contiguous_vs_lanes.in1", 2);
  // Registers and code size.
  expect("log2_accumulators", 6);
  expect("accumulators_vs_registers", 64.0 / (16 * 8));
  expect("log2_unroll", 1);
  expect("log2_straight_line_ops", std::log2(4 * 16 * 2 * 2));
  // Every tile is full.
  expect("partial_fraction", 0);
  expect("partial.none", 1);
  expect("partial.peeled", 0);
  expect("padding_overhead", 0);
}

TEST_F(FeaturesTest, ThreadsWithoutOuterTilesRunOneTask) {
  mlir::Operation *anchor = anchorOf(kMatmul);
  Schedule s = sketch(anchor, "cpu.tile");
  setKnob(s, "threads", 4);
  setKnob(s, "forall.d0", 0);
  setKnob(s, "forall.d1", 0);
  std::vector<float> f = extractFeatures(anchor, s, target());
  EXPECT_EQ(get(f, "log2_tasks"), 0.0f);
  EXPECT_EQ(get(f, "load_imbalance"), 4.0f);
  EXPECT_EQ(get(f, "used_cores"), 0.25f);
  // 3 tasks on 2 threads: one thread runs two.
  setKnob(s, "threads", 2);
  setKnob(s, "forall.d1", 16);
  f = extractFeatures(anchor, s, target());
  EXPECT_FLOAT_EQ(get(f, "log2_tasks"), std::log2(3.0f));
  EXPECT_FLOAT_EQ(get(f, "load_imbalance"), 4.0f / 3.0f);
}

TEST_F(FeaturesTest, WgmmaPipelineKnobsAreFeatures) {
  // gpu.wgmma's tma, stages and group.m change no tile of the loop nest
  // but do change the kernel: the model sees them.
  const char *bf16 = R"mlir(
func.func @f(%a: tensor<512x256xbf16>, %b: tensor<256x512xbf16>, %c: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<512x256xbf16>, tensor<256x512xbf16>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
})mlir";
  mlir::Operation *anchor = anchorOf(bf16);
  llvm::Expected<TargetDescription> gpu = parseTarget("cuda:sm_90a");
  ASSERT_TRUE(static_cast<bool>(gpu)) << llvm::toString(gpu.takeError());
  auto sketches = getCandidateSketches(anchor, *gpu);
  auto it = llvm::find_if(sketches, [](const Schedule &s) {
    return s.rule->getName() == "gpu.wgmma";
  });
  ASSERT_NE(it, sketches.end());
  Schedule s = *it;
  setKnob(s, "tma", 1);
  setKnob(s, "stages", 4);
  setKnob(s, "group.m", 8);
  std::vector<float> tma = extractFeatures(anchor, s, *gpu);
  EXPECT_EQ(get(tma, "tile_copy.tma"), 1.0f);
  EXPECT_EQ(get(tma, "tile_copy.cp_async"), 0.0f);
  EXPECT_EQ(get(tma, "log2_pipeline_stages"), std::log2(3.0f));
  EXPECT_EQ(get(tma, "log2_raster_group"), 3.0f);
  setKnob(s, "tma", 0);
  std::vector<float> cpAsync = extractFeatures(anchor, s, *gpu);
  EXPECT_EQ(get(cpAsync, "tile_copy.tma"), 0.0f);
  EXPECT_EQ(get(cpAsync, "tile_copy.cp_async"), 1.0f);
  setKnob(s, "tma", 2);
  EXPECT_EQ(get(extractFeatures(anchor, s, *gpu), "log2_pipeline_stages"),
            2.0f);
  setKnob(s, "group.m", 1);
  EXPECT_EQ(get(extractFeatures(anchor, s, *gpu), "log2_raster_group"), 0.0f);
}

TEST_F(FeaturesTest, FeaturesFollowTileKnobs) {
  mlir::Operation *anchor = anchorOf(kMatmul);
  Schedule s = sketch(anchor, "cpu.tile");
  setKnob(s, "reg.d1", 16);
  std::vector<float> before = extractFeatures(anchor, s, target());
  setKnob(s, "reg.d1", 8);
  std::vector<float> after = extractFeatures(anchor, s, target());
  EXPECT_TRUE(sameFeatures(before, before));
  EXPECT_FALSE(sameFeatures(before, after));
  EXPECT_EQ(get(before, "register.log2_tile.d1"), 4.0f);
  EXPECT_EQ(get(after, "register.log2_tile.d1"), 3.0f);
  EXPECT_EQ(get(after, "log2_vector_width"), 3.0f);
  EXPECT_LT(get(after, "register.log2_bytes.in1"),
            get(before, "register.log2_bytes.in1"));
  EXPECT_GT(get(after, "register.log2_trips"),
            get(before, "register.log2_trips"));
  // Knobs that change nothing in the loop nest change nothing.
  setKnob(s, "reg.d1", 16);
  EXPECT_TRUE(sameFeatures(extractFeatures(anchor, s, target()), before));
}

TEST_F(FeaturesTest, PartialTilesPeeledOrPadded) {
  // 37 rows in tiles of 8 (32 full), 53 columns in tiles of 16 (48 full).
  mlir::Operation *anchor = anchorOf(kIrregularMatmul);
  Schedule s = sketch(anchor, "cpu.tile");
  setKnob(s, "forall.d0", 0);
  setKnob(s, "forall.d1", 0);
  setKnob(s, "reg.d0", 8);
  setKnob(s, "reg.d1", 16);
  setKnob(s, "kvec.d2", 1);
  setKnob(s, "pad", 0);
  std::vector<float> f = extractFeatures(anchor, s, target());
  EXPECT_NEAR(get(f, "partial_fraction"), 1 - (32.0 / 37) * (48.0 / 53), 1e-6);
  EXPECT_EQ(get(f, "partial.peeled"), 1.0f);
  EXPECT_EQ(get(f, "padding_overhead"), 0.0f);
  setKnob(s, "pad", 1);
  f = extractFeatures(anchor, s, target());
  EXPECT_EQ(get(f, "partial.padded"), 1.0f);
  EXPECT_NEAR(get(f, "padding_overhead"), (40.0 / 37) * (64.0 / 53) - 1, 1e-6);
}

TEST_F(FeaturesTest, ConvolutionWindowsProjectThroughIndexingMaps) {
  // Loops n, oh, ow, f, kh, kw, c = 1, 8, 8, 16, 3, 3, 8. The register
  // level tiles oh to 1 (decompose) and ow to 4, leaving kh and kw whole:
  // the input tile is 1 x (1 + 3 - 1) x (4 + 3 - 1) x 8.
  mlir::Operation *anchor = anchorOf(kConv);
  Schedule s = sketch(anchor, "cpu.tile");
  setKnob(s, "reg.d2", 4);
  setKnob(s, "reg.d3", 16);
  setKnob(s, "kvec.d6", 8);
  std::vector<float> f = extractFeatures(anchor, s, target());
  EXPECT_EQ(get(f, "kind.convolution"), 1.0f);
  EXPECT_FLOAT_EQ(get(f, "register.log2_bytes.in0"),
                  std::log2(1.0f * 3 * 6 * 8 * 4));
  EXPECT_FLOAT_EQ(get(f, "register.log2_bytes.in1"),
                  std::log2(3.0f * 3 * 8 * 16 * 4));
  // The inner level takes one window element: 1 x 1 x 4 x 8.
  EXPECT_FLOAT_EQ(get(f, "inner.log2_bytes.in0"), std::log2(4.0f * 8 * 4));
  // The output's channels (f) are the vector loop.
  EXPECT_EQ(get(f, "log2_vector_width"), 4.0f);
  EXPECT_EQ(get(f, "vector_access.in0"), 0.0f);
  EXPECT_EQ(get(f, "vector_access.in1"), 1.0f);
}

TEST_F(FeaturesTest, RfactorAndSoftmaxDescribeTheirThreads) {
  mlir::Operation *sum = anchorOf(kRowSum);
  Schedule r = sketch(sum, "cpu.rfactor");
  setKnob(r, "split.d1", 8);
  setKnob(r, "kvec.d1", 16);
  std::vector<float> f = extractFeatures(sum, r, target());
  EXPECT_EQ(get(f, "log2_tasks"), 3.0f);
  EXPECT_EQ(get(f, "threads.log2_tile.d1"), 9.0f); // 4096 / 8
  EXPECT_EQ(get(f, "log2_vector_width"), 4.0f);
  EXPECT_EQ(get(f, "vector_loop_is_reduction"), 1.0f);

  mlir::Operation *softmax = anchorOf(kSoftmax);
  Schedule s = sketch(softmax, "cpu.softmax");
  setKnob(s, "forall.d0", 32);
  setKnob(s, "vec", 16);
  f = extractFeatures(softmax, s, target());
  EXPECT_EQ(get(f, "kind.softmax"), 1.0f);
  EXPECT_EQ(get(f, "log2_tasks"), 2.0f); // 128 rows / 32
  EXPECT_EQ(get(f, "register.log2_tile.d1"), 4.0f);
  EXPECT_EQ(get(f, "register.log2_bytes.in0"), std::log2(16.0f * 4));
  EXPECT_EQ(get(f, "partial_fraction"), 0.0f);
}

/// Spearman rank correlation, ties ranked by their average.
double spearman(const std::vector<float> &a, const std::vector<float> &b) {
  auto ranks = [](const std::vector<float> &v) {
    std::vector<size_t> order(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t x, size_t y) { return v[x] < v[y]; });
    std::vector<double> rank(v.size());
    for (size_t i = 0; i < order.size();) {
      size_t j = i;
      while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]])
        ++j;
      for (size_t k = i; k <= j; ++k)
        rank[order[k]] = (i + j) / 2.0;
      i = j + 1;
    }
    return rank;
  };
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double n = ra.size(), mean = (n - 1) / 2, cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  return cov / std::sqrt(va * vb);
}

TEST_F(FeaturesTest, ModelsRankRealCandidates) {
  // 2000 random matmul schedules scored by a made-up machine that likes
  // register tiles of 64 accumulators, whole vectors and busy cores; the
  // models must recover its ranking from the features alone, which takes
  // features of the loop nest, not of the knobs (a register knob larger
  // than its outer tile changes nothing).
  mlir::Operation *anchor = anchorOf(kMatmul);
  TargetDescription t = target();
  Schedule base = sketch(anchor, "cpu.tile");
  Sampler sampler(3);
  std::vector<std::vector<float>> features;
  std::vector<float> scores;
  while (features.size() < 2500) {
    std::optional<KnobIndices> indices = sampler.sample(base, anchor, t);
    ASSERT_TRUE(indices);
    Schedule s = base;
    s.indices = *indices;
    KnobAssignment k = s.getAssignment();
    // Register tiles are cut to the outer tiles they sit in.
    auto registerTile = [&](llvm::StringRef reg, llvm::StringRef outer) {
      int64_t tile = k.get(reg);
      return k.get(outer) ? std::min(tile, k.get(outer)) : tile;
    };
    int64_t m = registerTile("reg.d0", "forall.d0"),
            n = registerTile("reg.d1", "forall.d1");
    double registers = std::log2(double(m * n));
    double wholeVectors = n % 8 == 0 ? 1 : 0.5;
    int64_t tasks =
        (k.get("forall.d0") ? 64 / k.get("forall.d0") : 1) *
        (k.get("forall.d1") ? (48 + k.get("forall.d1") - 1) / k.get("forall.d1")
                            : 1);
    double busy = double(std::min<int64_t>(tasks, k.get("threads"))) / 4;
    scores.push_back(float(wholeVectors * (0.2 + 0.8 * busy) /
                           (1 + std::abs(registers - 6))));
    features.push_back(extractFeatures(anchor, s, t));
  }
  std::vector<std::vector<float>> train(features.begin(),
                                        features.begin() + 2000),
      test(features.begin() + 2000, features.end());
  std::vector<float> trainScores(scores.begin(), scores.begin() + 2000),
      testScores(scores.begin() + 2000, scores.end());

  llvm::Expected<std::unique_ptr<CostModel>> xgboost =
      createXGBoostCostModel(1);
  ASSERT_TRUE(bool(xgboost)) << llvm::toString(xgboost.takeError());
  std::vector<std::unique_ptr<CostModel>> models;
  models.push_back(std::move(*xgboost));
  models.push_back(createNearestNeighbourCostModel());
  for (std::unique_ptr<CostModel> &model : models) {
    auto start = std::chrono::steady_clock::now();
    model->train(train, trainScores);
    auto trained = std::chrono::steady_clock::now();
    std::vector<float> predicted = model->predict(test);
    auto done = std::chrono::steady_clock::now();
    double rho = spearman(predicted, testScores);
    std::printf(
        "%s on %zu x %u real features: train %.1f ms, predict %zu in "
        "%.1f ms, Spearman %.3f\n",
        model->getName().str().c_str(), train.size(), getNumFeatures(),
        std::chrono::duration<double, std::milli>(trained - start).count(),
        test.size(),
        std::chrono::duration<double, std::milli>(done - trained).count(), rho);
    EXPECT_GT(rho, 0.8) << model->getName().str();
  }
}

} // namespace

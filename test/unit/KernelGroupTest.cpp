//===- KernelGroupTest.cpp - Which ops join a workload's kernel -----------===//

#include "TestUtils.h"

#include "ke/Workload/Kernel.h"
#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace ke;
using ke::testing::IRTest;

namespace {

/// An RMS norm: a row sum of squares read by the normalization.
constexpr llvm::StringLiteral rmsnorm = R"mlir(
func.func @f(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x128xf32>
  %er = tensor.empty() : tensor<4xf32>
  %ssi = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x128xf32>) outs(%ssi : tensor<4xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %q = arith.mulf %v, %v : f32
      %s = arith.addf %q, %acc : f32
      linalg.yield %s : f32
  } -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss : tensor<4x128xf32>, tensor<4xf32>) outs(%e : tensor<4x128xf32>) {
    ^bb0(%v: f32, %r0: f32, %o: f32):
      %y = arith.mulf %v, %r0 : f32
      linalg.yield %y : f32
  } -> tensor<4x128xf32>
  return %r : tensor<4x128xf32>
})mlir";

class KernelGroupTest : public IRTest {
protected:
  /// The linalg ops of the parsed function, in order: fill, sum, norm.
  llvm::SmallVector<mlir::Operation *> opsOf(llvm::StringRef source) {
    mlir::ModuleOp module = parse(source);
    llvm::SmallVector<mlir::Operation *> ops;
    module.walk([&](mlir::linalg::LinalgOp op) { ops.push_back(op); });
    return ops;
  }
};

TEST_F(KernelGroupTest, RowReductionsJoinTheElementwiseReader) {
  llvm::SmallVector<mlir::Operation *> ops = opsOf(rmsnorm);
  ASSERT_EQ(ops.size(), 3u);
  mlir::Operation *fill = ops[0], *sum = ops[1], *norm = ops[2];
  EXPECT_EQ(getRowReductions(norm), llvm::SmallVector<mlir::Operation *>{sum});
  EXPECT_EQ(getKernelGroup(norm, KernelFusion::RowReductions),
            (llvm::SmallVector<mlir::Operation *>{fill, sum, norm}));
  // The fill belongs to the sum, which belongs to the norm: both report the
  // norm as the anchor that compiles them.
  EXPECT_EQ(getFusingAnchor(sum, KernelFusion::RowReductions), norm);
  EXPECT_EQ(getFusingAnchor(fill, KernelFusion::RowReductions), norm);
  // The same on GPUs; without row fusion the sum is a workload of its own.
  EXPECT_EQ(getKernelGroup(norm,
                           KernelFusion::RowReductionsInternalAccumulators),
            (llvm::SmallVector<mlir::Operation *>{fill, sum, norm}));
  EXPECT_EQ(getKernelGroup(norm, KernelFusion::Elementwise),
            llvm::SmallVector<mlir::Operation *>{norm});
  EXPECT_EQ(getFusingAnchor(sum, KernelFusion::Elementwise), nullptr);
}

TEST_F(KernelGroupTest, FusedKernelKeepsNoScratchArgument) {
  llvm::SmallVector<mlir::Operation *> ops = opsOf(rmsnorm);
  ASSERT_EQ(ops.size(), 3u);
  mlir::FailureOr<KernelModule> kernel =
      buildKernelModule(ops[2], KernelFusion::RowReductions);
  ASSERT_TRUE(mlir::succeeded(kernel));
  // x and the result; the sum's tensor.empty travels with the group.
  ASSERT_EQ(kernel->arguments.size(), 2u);
  EXPECT_EQ(kernel->arguments[0].role, BufferRole::Input);
  EXPECT_EQ(kernel->arguments[1].role, BufferRole::Output);
  unsigned tagged = 0;
  kernel->module->walk([&](mlir::Operation *op) {
    tagged += op->hasAttr(kRowReductionAttr);
  });
  EXPECT_EQ(tagged, 1u);
}

TEST_F(KernelGroupTest, OnlyGpusKeepAFusedAnchorsAccumulatorInside) {
  // A matmul whose result only its ReLU reads: on GPUs (its accumulator
  // lives tile by tile in registers) the accumulator's tensor.empty travels
  // with the group; on CPUs it stays a kernel argument, as without row
  // fusion.
  llvm::SmallVector<mlir::Operation *> ops = opsOf(R"mlir(
func.func @f(%a: tensor<32x16xf32>, %b: tensor<16x64xf32>) -> tensor<32x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %e2 = tensor.empty() : tensor<32x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x64xf32>) outs(%c : tensor<32x64xf32>) -> tensor<32x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<32x64xf32>) outs(%e2 : tensor<32x64xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.maximumf %x, %z : f32
      linalg.yield %y : f32
  } -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
})mlir");
  ASSERT_EQ(ops.size(), 3u);
  mlir::FailureOr<KernelModule> gpu = buildKernelModule(
      ops[1], KernelFusion::RowReductionsInternalAccumulators);
  mlir::FailureOr<KernelModule> cpu =
      buildKernelModule(ops[1], KernelFusion::RowReductions);
  ASSERT_TRUE(mlir::succeeded(gpu));
  ASSERT_TRUE(mlir::succeeded(cpu));
  // A, B and the ReLU's result; on CPUs also the accumulator.
  EXPECT_EQ(gpu->arguments.size(), 3u);
  EXPECT_EQ(cpu->arguments.size(), 4u);
}

TEST_F(KernelGroupTest, RowsNotInWholeWavefrontsNeedACombiner) {
  // Rows of 96 (not whole wavefronts) are grouped for ke-gpu-row-norm's
  // kernel, which splits a reduction by its combiner (the sum here)...
  std::string source = rmsnorm.str();
  for (size_t at; (at = source.find("128")) != std::string::npos;)
    source.replace(at, 3, "96");
  llvm::SmallVector<mlir::Operation *> ops = opsOf(source);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(getRowReductions(ops[2]).size(), 1u);
  EXPECT_EQ(getFusingAnchor(ops[1], KernelFusion::RowReductions), ops[2]);
  // ...and stay apart when the body has none: (acc + x*x) * 2 reads the
  // accumulator after combining it.
  std::string scaled = source;
  size_t at = scaled.find("linalg.yield %s : f32");
  ASSERT_NE(at, std::string::npos);
  scaled.replace(at, 21,
                 "%two = arith.constant 2.0 : f32\n      %t = arith.mulf %s, "
                 "%two : f32\n      linalg.yield %t : f32");
  ops = opsOf(scaled);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_TRUE(getRowReductions(ops[2]).empty());
  EXPECT_EQ(getFusingAnchor(ops[1], KernelFusion::RowReductions), nullptr);
}

TEST_F(KernelGroupTest, AFillReadAsAnInitBelongsToItsReader) {
  // An all-parallel op that reads its init (a max against -inf): the fill
  // is in the op's group, and the op is not in the fill's. Before, each
  // group held the other, both were "fused", and nothing was compiled.
  llvm::SmallVector<mlir::Operation *> ops = opsOf(R"mlir(
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%f : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.maximumf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<8x16xf32>
  return %m : tensor<8x16xf32>
})mlir");
  ASSERT_EQ(ops.size(), 2u);
  mlir::Operation *fill = ops[0], *max = ops[1];
  for (KernelFusion fusion :
       {KernelFusion::Elementwise, KernelFusion::RowReductions}) {
    EXPECT_EQ(getKernelGroup(fill, fusion),
              llvm::SmallVector<mlir::Operation *>{fill});
    EXPECT_EQ(getKernelGroup(max, fusion),
              (llvm::SmallVector<mlir::Operation *>{fill, max}));
    EXPECT_EQ(getFusingAnchor(fill, fusion), max);
    EXPECT_EQ(getFusingAnchor(max, fusion), nullptr);
  }
}

TEST_F(KernelGroupTest, TheFirstGroupAnchorSkipsFusedOccurrences) {
  // Two row sums of one workload: the first is fused into the norm that
  // reads it, the second (read by the function's return) is a group of its
  // own. The tuner and compile take the second for the workload.
  std::string source = rmsnorm.str();
  std::string second = R"mlir(
  %ssi2 = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %ss2 = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}
      ins(%r : tensor<4x128xf32>) outs(%ssi2 : tensor<4xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %q = arith.mulf %v, %v : f32
      %s = arith.addf %q, %acc : f32
      linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r, %ss2 : tensor<4x128xf32>, tensor<4xf32>
})mlir";
  source.replace(source.find("  return %r"), std::string::npos, second);
  source.replace(source.find("-> tensor<4x128xf32> {"), 22,
                 "-> (tensor<4x128xf32>, tensor<4xf32>) {");
  llvm::SmallVector<mlir::Operation *> ops = opsOf(source);
  ASSERT_EQ(ops.size(), 5u);
  mlir::Operation *firstSum = ops[1], *secondSum = ops[4];
  std::string key = computeWorkloadKey(firstSum);
  ASSERT_EQ(computeWorkloadKey(secondSum), key);
  EXPECT_NE(getFusingAnchor(firstSum, KernelFusion::RowReductions), nullptr);
  EXPECT_EQ(getFirstGroupAnchor(firstSum, key, KernelFusion::RowReductions),
            secondSum);
  // Unfused, the first occurrence is its own group.
  EXPECT_EQ(getFirstGroupAnchor(firstSum, key, KernelFusion::Elementwise),
            firstSum);
}

} // namespace

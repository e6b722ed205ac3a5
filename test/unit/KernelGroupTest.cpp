//===- KernelGroupTest.cpp - Which ops join a workload's kernel -----------===//

#include "TestUtils.h"

#include "ke/Workload/Kernel.h"

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

TEST_F(KernelGroupTest, RowReductionsJoinTheElementwiseReaderOnGpus) {
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
  // The CPU's grouping is unchanged.
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

TEST_F(KernelGroupTest, RowsNotInWholeWavefrontsStayApart) {
  std::string source = rmsnorm.str();
  for (size_t at; (at = source.find("128")) != std::string::npos;)
    source.replace(at, 3, "96");
  llvm::SmallVector<mlir::Operation *> ops = opsOf(source);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_TRUE(getRowReductions(ops[2]).empty());
  EXPECT_EQ(getFusingAnchor(ops[1], KernelFusion::RowReductions), nullptr);
}

} // namespace

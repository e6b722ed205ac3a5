//===- GpuReferenceSplitReductions.cpp - Long rows, more threads ----------===//
//
// ke-gpu-reference-split-reductions (ke/Codegen/Passes.td), a step of the
// device reference (ke/Codegen/GpuReference.h).
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#include <cmath>

#define DEBUG_TYPE "ke-gpu-reference-split-reductions"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_GPUREFERENCESPLITREDUCTIONSPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// Ops with fewer output points than this get split...
constexpr int64_t kFewPoints = 1 << 16;
/// ... when their one reduction loop is at least this long...
constexpr int64_t kLongReduction = 4096;
/// ... into about this many partial sums in all.
constexpr int64_t kTargetThreads = 1 << 18;

/// The number of slices to split a reduction of `length` iterations over
/// `points` outputs into: the largest divisor of `length` that keeps the
/// threads at kTargetThreads or below and the combining reduction (each
/// output's thread sums `ratio` partials) no longer than the slices (at
/// most the square root of `length`); 1 when the op is not split.
int64_t chooseRatio(int64_t points, int64_t length) {
  if (points >= kFewPoints || length < kLongReduction)
    return 1;
  int64_t target = std::max<int64_t>(2, kTargetThreads / points);
  int64_t balanced = int64_t(std::sqrt(double(length)));
  for (int64_t ratio = std::min(target, balanced); ratio >= 2; --ratio)
    if (length % ratio == 0)
      return ratio;
  return 1;
}

void splitLongReductions(func::FuncOp host) {
  SmallVector<linalg::LinalgOp> ops;
  host.walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() && op.getNumReductionLoops() == 1)
      ops.push_back(op);
  });
  IRRewriter rewriter(host.getContext());
  for (linalg::LinalgOp op : ops) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      continue;
    int64_t points = 1, length = 1;
    for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray()))
      (linalg::isParallelIterator(iterator) ? points : length) *= ranges[dim];
    int64_t ratio = chooseRatio(points, length);
    if (ratio == 1)
      continue;
    rewriter.setInsertionPoint(op);
    // The slice index goes last among the partials' dimensions and is the
    // inner, parallel part of the split loop: k = outer * ratio + slice.
    unsigned sliceDim = cast<ShapedType>(op.getDpsInits()[0].getType()).getRank();
    auto control = [&](linalg::LinalgOp) {
      return linalg::SplitReductionOptions{ratio, sliceDim,
                                           /*innerParallel=*/true};
    };
    FailureOr<linalg::SplitReductionResult> split =
        linalg::splitReduction(rewriter, op, control);
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << op->getName() << ": "
                            << points << " points x " << length << ", ratio "
                            << ratio << (failed(split) ? ": not split" : "")
                            << "\n");
  }
}

struct GpuReferenceSplitReductionsPass
    : ke::impl::GpuReferenceSplitReductionsPassBase<
          GpuReferenceSplitReductionsPass> {
  void runOnOperation() override {
    auto host =
        getOperation().lookupSymbol<func::FuncOp>(ke::kKernelFunctionName);
    if (host && !host.isExternal())
      splitLongReductions(host);
  }
};

} // namespace

//===- SplitOuterReductions.cpp - Reductions split in two stages ----------===//
//
// ke-split-outer-reductions (ke/Graph/Passes.td). A batch norm's mean over
// (batch, rows, columns) for each channel is a generic with loops
// (n: reduction, c: parallel, h, w: reduction). No reduction rule takes a
// reduction loop outside a parallel one, so the elementwise rule ran it:
// one thread per channel summing 16.7 million floats in order, slow, and,
// once the running sum dwarfs each term, off by more than KernelBench's
// 1e-4 (BatchNorm, Conv2d + BatchNorm). Split in two (rfactor):
//
//   stage 1  the trailing reduction loops only, the outer ones parallel:
//            partial[n, c] = sum over (h, w), a row reduction of
//            h * w elements that gpu.reduce splits over a block's threads;
//   stage 2  partial[n, c] combined over n into the original init.
//
// The body must be `combine(acc, f(inputs))` with `combine` one operation
// that has a neutral element (stage 1 starts from it) and takes the
// accumulator once; stage 2 is `combine` alone. Reassociating a float sum
// changes its rounding; the two-stage sum is the more accurate.
//
//===----------------------------------------------------------------------===//

#include "ke/Graph/Passes.h"

#include "GraphSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-split-outer-reductions"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_SPLITOUTERREDUCTIONSPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

/// Fewest elements in the trailing reduction for the split to pay: below
/// this, a thread's sequential sum is short and exact enough.
constexpr int64_t kMinTrailingElements = 256;

/// The op in `body` that combines the accumulator with a value computed
/// from the inputs alone (`yield combine(acc, v)`, `acc` used once).
Operation *getCombiner(Block &body) {
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield->getNumOperands() != 1 || body.getNumArguments() == 0)
    return nullptr;
  Operation *combiner = yield->getOperand(0).getDefiningOp();
  BlockArgument acc = body.getArguments().back();
  if (!combiner || combiner->getBlock() != &body || !acc.hasOneUse() ||
      combiner->getNumOperands() != 2 || combiner->getNumResults() != 1 ||
      !llvm::is_contained(combiner->getOperands(), Value(acc)) ||
      !isMemoryEffectFree(combiner) || !arith::getNeutralElement(combiner))
    return nullptr;
  return combiner;
}

struct SplitOuterReduction : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
        op->getNumResults() != 1)
      return rewriter.notifyMatchFailure(op, "not one tensor result");
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return rewriter.notifyMatchFailure(op, "dynamic loop ranges");
    if (!op.getBody()->getOps<linalg::IndexOp>().empty())
      return rewriter.notifyMatchFailure(op, "reads loop indices");
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (!llvm::all_of(maps, [](AffineMap map) {
          return map.isProjectedPermutation(/*allowZeroInResults=*/true);
        }))
      return rewriter.notifyMatchFailure(op, "maps are not permutations");
    // The trailing run of reduction loops, and the reduction loops before
    // it (each outside some parallel loop).
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    unsigned numLoops = iterators.size(), first = numLoops;
    while (first > 0 && iterators[first - 1] == utils::IteratorType::reduction)
      --first;
    int64_t trailing = 1, outer = 1;
    for (unsigned loop = 0; loop < numLoops; ++loop)
      if (iterators[loop] == utils::IteratorType::reduction)
        (loop >= first ? trailing : outer) *= ranges[loop];
    if (first == numLoops || first == 0 || outer < 2 ||
        trailing < kMinTrailingElements)
      return rewriter.notifyMatchFailure(
          op, "no long trailing reduction with reductions outside it");
    Operation *combiner = getCombiner(*op.getBody());
    if (!combiner)
      return rewriter.notifyMatchFailure(op, "no single combining op");
    TypedAttr neutral = *arith::getNeutralElement(combiner);

    Location loc = op.getLoc();
    OpOperand *init = op.getDpsInitOperand(0);
    Type element = getElementTypeOrSelf(init->get().getType());
    MLIRContext *context = op.getContext();

    // Stage 1: partial[outer loops] over the trailing reduction, from the
    // neutral element.
    SmallVector<int64_t> partialShape(ranges.begin(), ranges.begin() + first);
    Value empty = tensor::EmptyOp::create(rewriter, loc, partialShape, element);
    Value zero = arith::ConstantOp::create(rewriter, loc, neutral);
    Value filled =
        linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
    SmallVector<AffineMap> stage1Maps(maps.begin(), maps.end());
    SmallVector<AffineExpr> partialDims;
    for (unsigned loop = 0; loop < first; ++loop)
      partialDims.push_back(getAffineDimExpr(loop, context));
    stage1Maps.back() = AffineMap::get(numLoops, 0, partialDims, context);
    SmallVector<utils::IteratorType> stage1Iterators(
        first, utils::IteratorType::parallel);
    stage1Iterators.append(numLoops - first, utils::IteratorType::reduction);
    auto stage1 = linalg::GenericOp::create(
        rewriter, loc, filled.getType(), op.getDpsInputs(), ValueRange{filled},
        stage1Maps, stage1Iterators);
    rewriter.cloneRegionBefore(op.getRegion(), stage1.getRegion(),
                               stage1.getRegion().begin());
    stage1->setDiscardableAttrs(op->getDiscardableAttrDictionary());

    // Stage 2: the partials combined over the outer reduction loops into
    // the original init.
    AffineMap partialMap = AffineMap::getMultiDimIdentityMap(first, context);
    AffineMap outputMap = op.getMatchingIndexingMap(init);
    AffineMap initMap =
        AffineMap::get(first, 0, outputMap.getResults(), context);
    SmallVector<utils::IteratorType> stage2Iterators(iterators.begin(),
                                                     iterators.begin() + first);
    auto stage2 = linalg::GenericOp::create(
        rewriter, loc, op->getResultTypes(), ValueRange{stage1.getResult(0)},
        ValueRange{init->get()}, ArrayRef<AffineMap>{partialMap, initMap},
        stage2Iterators, [&](OpBuilder &b, Location nested, ValueRange args) {
          BlockArgument acc = op.getBody()->getArguments().back();
          IRMapping mapping;
          for (Value operand : combiner->getOperands())
            mapping.map(operand, operand == acc ? args[1] : args[0]);
          Operation *combined = b.clone(*combiner, mapping);
          linalg::YieldOp::create(b, nested, combined->getResult(0));
        });
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] split " << trailing
                            << " trailing from " << outer << " outer\n");
    rewriter.replaceOp(op, stage2->getResults());
    return success();
  }
};

struct SplitOuterReductionsPass
    : ke::impl::SplitOuterReductionsPassBase<SplitOuterReductionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitOuterReduction>(&getContext());
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace

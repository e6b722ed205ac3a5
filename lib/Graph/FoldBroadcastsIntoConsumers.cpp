//===- FoldBroadcastsIntoConsumers.cpp - Broadcasts into generic maps -----===//
//
// ke-fold-broadcasts-into-consumers (ke/Graph/Passes.td). torch-mlir
// materializes a bias or a per-row statistic with linalg.broadcast before
// the elementwise generic that reads it; in ke that broadcast is a
// data-movement workload, and it sits between the elementwise op and the
// contraction whose kernel should take it. Reading the broadcast's input
// through a composed indexing map removes it. MLIR's
// linalg-fold-into-elementwise does this for linalg.elementwise and
// transposes only; importers emit linalg.generic.
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-fold-broadcasts-into-consumers"

using namespace mlir;
using namespace ke;

namespace ke {
#define GEN_PASS_DEF_FOLDBROADCASTSINTOCONSUMERSPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

/// Folds broadcasts and transposes that produce inputs of an elementwise
/// generic into its indexing maps. The consumer's init covers every loop
/// (its loops are all parallel), so the loop bounds stay computable.
struct FoldIntoElementwiseGeneric : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() ||
        op.getNumParallelLoops() != op.getNumLoops())
      return rewriter.notifyMatchFailure(op, "not elementwise on tensors");
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<std::pair<OpOperand *, Value>> replacements;
    for (OpOperand *operand : op.getDpsInputOperands()) {
      linalg::LinalgOp producer =
          getDataMovementProducer(operand->get(), /*allowBroadcast=*/true);
      if (!producer)
        continue;
      unsigned index = operand->getOperandNumber();
      AffineMap newMap = composeThroughProducer(producer, maps[index]);
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] " << producer->getName()
                 << " into operand " << index << ": " << newMap << "\n");
      maps[index] = newMap;
      replacements.push_back({operand, producer.getDpsInputs()[0]});
    }
    if (replacements.empty())
      return rewriter.notifyMatchFailure(op, "no broadcast or transpose");
    rewriter.modifyOpInPlace(op, [&] {
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      for (auto [operand, value] : replacements)
        operand->set(value);
    });
    return success();
  }
};

struct FoldBroadcastsIntoConsumersPass
    : ke::impl::FoldBroadcastsIntoConsumersPassBase<
          FoldBroadcastsIntoConsumersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldIntoElementwiseGeneric>(&getContext());
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace

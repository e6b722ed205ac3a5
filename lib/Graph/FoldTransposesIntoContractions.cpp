//===- FoldTransposesIntoContractions.cpp - Transposes into matmul maps ---===//
//
// ke-fold-transposes-into-contractions (ke/Graph/Passes.td). torch-mlir
// imports nn.Linear as a transpose of the weight feeding linalg.matmul; the
// transpose would be a data-movement workload of its own. MLIR's matmul and
// batch_matmul take explicit indexing maps, so the transpose becomes part of
// the contraction: the same named op (and workload key) as a hand-written
// transposed matmul, which ke's contraction rules (cpu.tile, gpu.tile)
// schedule through the LinalgOp interface like any other layout.
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-fold-transposes-into-contractions"

using namespace mlir;
using namespace ke;

namespace ke {
#define GEN_PASS_DEF_FOLDTRANSPOSESINTOCONTRACTIONSPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

/// Whether `newMap` reads an operand of `op` in a layout its verifier
/// accepts: the dimensions of `oldMap` in another order (a transpose of a
/// matmul operand), with a batch_matmul's batch dimension still first.
bool isAcceptedLayout(Operation *op, AffineMap oldMap, AffineMap newMap) {
  if (newMap.getNumResults() != oldMap.getNumResults() ||
      !newMap.isProjectedPermutation())
    return false;
  for (AffineExpr result : oldMap.getResults())
    if (!llvm::is_contained(newMap.getResults(), result))
      return false;
  if (isa<linalg::BatchMatmulOp>(op))
    return newMap.getResult(0) == oldMap.getResult(0);
  return true;
}

/// Folds the transposes that produce `op`'s inputs into its indexing maps.
template <typename ContractionOp>
struct FoldTransposeIntoContraction : OpRewritePattern<ContractionOp> {
  using OpRewritePattern<ContractionOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
    if (!linalgOp.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
    SmallVector<std::pair<OpOperand *, Value>> replacements;
    for (OpOperand *operand : linalgOp.getDpsInputOperands()) {
      linalg::LinalgOp transpose =
          getDataMovementProducer(operand->get(), /*allowBroadcast=*/false);
      if (!transpose)
        continue;
      unsigned index = operand->getOperandNumber();
      AffineMap newMap = composeThroughProducer(transpose, maps[index]);
      if (!isAcceptedLayout(op, maps[index], newMap))
        continue;
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] operand " << index << ": "
                              << maps[index] << " -> " << newMap << "\n");
      maps[index] = newMap;
      replacements.push_back({operand, transpose.getDpsInputs()[0]});
    }
    if (replacements.empty())
      return rewriter.notifyMatchFailure(op, "no transposed input");
    rewriter.modifyOpInPlace(op, [&] {
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      for (auto [operand, value] : replacements)
        operand->set(value);
    });
    return success();
  }
};

struct FoldTransposesIntoContractionsPass
    : ke::impl::FoldTransposesIntoContractionsPassBase<
          FoldTransposesIntoContractionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTransposeIntoContraction<linalg::MatmulOp>,
                 FoldTransposeIntoContraction<linalg::BatchMatmulOp>>(
        &getContext());
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace

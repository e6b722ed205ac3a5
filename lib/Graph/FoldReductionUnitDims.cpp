//===- FoldReductionUnitDims.cpp - Kept dimensions of reductions dropped --===//
//
// ke-fold-reduction-unit-dims (ke/Graph/Passes.td). torch-mlir keeps the
// reduced dimension of a row reduction as a unit dimension read through a
// constant-0 map result ((d0, d1) -> (d0, 0)); ke's row-reduction grouping
// wants the row map (d0, d1) -> (d0). MLIR's unit-extent-dimension folding
// drops those dimensions with reshapes around the op. It runs only on
// generics without unit loops: a batch-1 elementwise op would otherwise be
// collapsed, and the reshape between it and the convolution that feeds it
// would keep it out of the convolution's kernel. The rewrites are applied
// to those ops and what they create only, with folding on, so that the
// reshapes between two rewritten ops fold away (an unrestricted driver with
// folding would hoist every constant of the function).
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-fold-reduction-unit-dims"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_FOLDREDUCTIONUNITDIMSPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

/// Whether `op` is a generic on tensors without unit loops that reads or
/// writes an operand through a constant-0 map result.
bool hasKeptUnitDims(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics())
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, [](int64_t range) {
        return range == 1 || ShapedType::isDynamic(range);
      }))
    return false;
  return llvm::any_of(op.getIndexingMapsArray(), [](AffineMap map) {
    return llvm::any_of(map.getResults(), [](AffineExpr expr) {
      auto constant = dyn_cast<AffineConstantExpr>(expr);
      return constant && constant.getValue() == 0;
    });
  });
}

/// Whether `op` is an elementwise generic with unit loops between reshapes
/// that only add and drop those unit dimensions: every tensor input comes
/// from a tensor.expand_shape and every user of its result is a
/// tensor.collapse_shape (log-softmax's log of the row sums, read as
/// tensor<Nx1xf32>). Folded, the reshapes go and the op fuses with its
/// neighbours; no convolution is on either side to keep it from.
bool isBetweenUnitReshapes(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops())
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::none_of(ranges, [](int64_t range) { return range == 1; }))
    return false;
  if (op.getDpsInputs().empty() ||
      !llvm::all_of(op.getDpsInputs(), [](Value input) {
        return !isa<RankedTensorType>(input.getType()) ||
               input.getDefiningOp<tensor::ExpandShapeOp>();
      }))
    return false;
  return !op->use_empty() && llvm::all_of(op->getUsers(), [](Operation *user) {
    return isa<tensor::CollapseShapeOp>(user);
  });
}

/// Whether `op` is a reduction on tensors with a unit loop (InstanceNorm's
/// statistics: batch norm over the input reshaped to [1, N * C, H, W],
/// loops (1, N * C, H, W) with the unit one reduced). The unit reduction
/// loop outside the parallel one keeps every reduction rule away: one
/// thread summed each of 7168 rows of 262144 values (0.05x of eager on an
/// H200). Reductions are never a convolution's consumer, so the reshapes
/// folding leaves around them keep nothing out of a kernel. A reduction
/// whose every reduction loop is unit (logsumexp over a kept dimension of
/// one) is not one: folded, it would become an all-parallel op that reads
/// its init, whose fill then belongs to no kernel group.
bool isReductionWithUnitLoops(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() == 0)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return false;
  bool reducesSomething = false;
  for (auto [range, iterator] : llvm::zip(ranges, op.getIteratorTypesArray()))
    if (linalg::isReductionIterator(iterator) && range != 1)
      reducesSomething = true;
  return reducesSomething &&
         llvm::any_of(ranges, [](int64_t range) { return range == 1; });
}

bool shouldFoldUnitDims(linalg::GenericOp op) {
  return hasKeptUnitDims(op) || isBetweenUnitReshapes(op) ||
         isReductionWithUnitLoops(op);
}

struct FoldReductionUnitDimsPass
    : ke::impl::FoldReductionUnitDimsPassBase<FoldReductionUnitDimsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (shouldFoldUnitDims(op) && !isOpTriviallyDead(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << ops.size()
                            << " generics with kept unit dimensions\n");
    linalg::ControlDropUnitDims control;
    control.controlFn = [](Operation *op) -> SmallVector<unsigned> {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      if (!generic || !shouldFoldUnitDims(generic))
        return {};
      return llvm::to_vector(llvm::seq<unsigned>(0, generic.getNumLoops()));
    };
    RewritePatternSet patterns(&getContext());
    linalg::populateFoldUnitExtentDimsPatterns(patterns, control);
    // The reshapes the rewrites leave between fills, empties and the
    // rewritten ops fold with them.
    linalg::FillOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    // The producers and users of the ops are where the reshapes land.
    // Two levels of producers: the fills of inits and their empties, which
    // the folded fills leave unused.
    llvm::SetVector<Operation *> scope(ops.begin(), ops.end());
    for (Operation *op : ops)
      for (Operation *user : op->getUsers())
        scope.insert(user);
    for (unsigned level = 0; level < 2; ++level)
      for (Operation *op : SmallVector<Operation *>(scope.getArrayRef()))
        for (Value operand : op->getOperands())
          if (Operation *def = operand.getDefiningOp())
            scope.insert(def);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps)
        .enableConstantCSE(false);
    (void)applyOpPatternsGreedily(scope.getArrayRef(), std::move(patterns),
                                  config);
  }
};

} // namespace

//===- CollapseReductionDims.cpp - Several reduction loops into one -------===//
//
// ke-collapse-reduction-dims (ke/Graph/Passes.td). A mean over all of a
// batch element's values (`x.mean(dim=[1, 2, 3, 4])`) is a generic with
// four reduction loops. ke's reduction rules take one innermost reduction
// loop; with four, the op falls to the elementwise rule, which runs the
// whole reduction inside each thread (a 7.6-million-element loop per
// thread, and vectorized code so large that LLVM takes minutes). When the
// reduction loops are consecutive and every operand reads them as one
// contiguous run of dimensions, they are one loop over a collapsed view of
// the input: upstream's collapseOpIterationDims rewrites the op, with
// reshapes of the operands around it.
//
//===----------------------------------------------------------------------===//

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-collapse-reduction-dims"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_COLLAPSEREDUCTIONDIMSPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

/// The reduction loops of `op` as one group to collapse, when there are
/// several, they are consecutive, and every operand's map reads them in
/// order as consecutive dimensions; none otherwise.
SmallVector<ReassociationIndices> getReductionGroup(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !generic.hasPureTensorSemantics())
    return {};
  SmallVector<unsigned> reductions;
  generic.getReductionDims(reductions);
  if (reductions.size() < 2)
    return {};
  for (auto [previous, next] :
       llvm::zip(reductions, llvm::drop_begin(reductions)))
    if (next != previous + 1)
      return {};
  // Plain dimensions only: a window's `d2 * 2 + d5` (pooling written as a
  // generic) reads no contiguous run, though upstream's check passes it.
  // Nor a constant 0: a mean over kept unit dimensions writes its result
  // through (d0, d1, 0, 0), which upstream's collapse turned into the
  // invalid (d0, d1, d0, d0) (KernelBench level2/44, two global average
  // pools in a row).
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (!llvm::all_of(maps, [](AffineMap map) {
        return map.isProjectedPermutation(/*allowZeroInResults=*/false);
      }))
    return {};
  ReassociationIndices group(reductions.begin(), reductions.end());
  if (!linalg::areDimSequencesPreserved(maps, {group}))
    return {};
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] collapsing "
                          << reductions.size() << " reduction loops of the op at "
                          << op.getLoc() << "\n");
  return {group};
}

struct CollapseReductionDimsPass
    : ke::impl::CollapseReductionDimsPassBase<CollapseReductionDimsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (!getReductionGroup(op).empty())
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    linalg::populateCollapseDimensions(patterns, getReductionGroup);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps)
        .enableFolding(false)
        .enableConstantCSE(false);
    (void)applyOpPatternsGreedily(ops, std::move(patterns), config);
  }
};

} // namespace

//===- EraseDeadResults.cpp - Unused results of generics dropped ----------===//
//
// ke-erase-dead-results (ke/Graph/Passes.td). torch-mlir's max reduction
// also computes an i64 index that nothing reads. A two-result reduction is
// no row reduction to ke's kernel grouping (getRowReductions wants one
// result), and the index doubles its registers; canonicalization keeps it
// because the index's init is read by the body. MLIR's
// erase-unused-operands-and-results patterns cut such unused cycles first.
// A generic they leave with no results and nothing but asserts (a gather's
// index checks, which fusion copied into its consumers) is erased too.
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "ke-erase-dead-results"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_ERASEDEADRESULTSPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

/// Erases a generic left with no results whose only side effects are
/// cf.assert: the index checks of a gather (torch's take-along-dim, in
/// cross-entropy) whose values elementwise fusion moved into the consumers.
/// Fusion clones the producer's body, checks included, into each consumer,
/// so the checks still run there; the husk has no tensor to tile and no
/// rule would take it.
struct EraseAssertOnlyGeneric : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (op->getNumResults() != 0 || !op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "has results or buffers");
    WalkResult effects = op.getBody()->walk([](Operation *inner) {
      if (isa<cf::AssertOp>(inner) || isMemoryEffectFree(inner))
        return WalkResult::advance();
      return WalkResult::interrupt();
    });
    if (effects.wasInterrupted())
      return rewriter.notifyMatchFailure(op, "has effects other than asserts");
    rewriter.eraseOp(op);
    return success();
  }
};

/// Replaces a generic on tensors that only copies its one input (identity
/// maps, the same type, the body yields the input's block argument) by
/// that input. torch-mlir's InstanceNorm copies its whole input this way
/// (7.5 GB in KernelBench's), and the copy was a kernel of its own.
struct EraseIdentityCopy : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
        op->getNumResults() != 1 ||
        op.getNumParallelLoops() != op.getNumLoops())
      return rewriter.notifyMatchFailure(op, "not a one-input map");
    Value input = op.getDpsInputs()[0];
    if (input.getType() != op->getResult(0).getType() ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }))
      return rewriter.notifyMatchFailure(op, "not an identity copy");
    auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
    if (yield.getValues()[0] !=
        op.getMatchingBlockArgument(op.getDpsInputOperand(0)))
      return rewriter.notifyMatchFailure(op, "computes something");
    rewriter.replaceOp(op, input);
    return success();
  }
};

struct EraseDeadResultsPass
    : ke::impl::EraseDeadResultsPassBase<EraseDeadResultsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    patterns.add<EraseAssertOnlyGeneric, EraseIdentityCopy>(&getContext());
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace

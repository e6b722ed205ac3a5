//===- SplitBiasFromInits.cpp - Bias adds out of accumulator inits --------===//
//
// ke-split-bias-from-inits (ke/Graph/Passes.td). torch-mlir writes a
// convolution's bias as a broadcast into the convolution's init. Kept that
// way, the broadcast is a kernel that writes the whole output, the
// convolution reads it back, and the elementwise tail (batch norm, ReLU)
// cannot take the bias. Started from zero instead, the convolution's fill
// is fused into its tiles, and the bias is one more elementwise op, which
// ke-fuse-elementwise-chains merges into the tail.
//
// An op qualifies when it accumulates by addition into its init: it has
// reduction loops and yields `arith.addf` of its init's block argument
// (convolutions, matmuls, sum pooling, hand-written generics alike; max
// pooling does not).
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-split-bias-from-inits"

using namespace mlir;
using namespace ke;

namespace ke {
#define GEN_PASS_DEF_SPLITBIASFROMINITSPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

/// Whether `op` adds what it computes to its (only) init: its body yields
/// `arith.addf` with the init's block argument as an operand.
bool accumulatesByAddition(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return false;
  Block *body = op.getBlock();
  BlockArgument init = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  return add && (add.getLhs() == init || add.getRhs() == init);
}

/// Moves the broadcast (or transpose) in `op`'s init into an elementwise
/// add after `op`, which accumulates into a fill of zero instead.
struct SplitBiasFromInit : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || !accumulatesByAddition(op))
      return rewriter.notifyMatchFailure(op, "does not add into its init");
    OpOperand *initOperand = op.getDpsInitOperand(0);
    linalg::LinalgOp producer =
        getDataMovementProducer(initOperand->get(), /*allowBroadcast=*/true);
    if (!producer)
      return rewriter.notifyMatchFailure(op, "init is no broadcast");
    auto type = cast<RankedTensorType>(initOperand->get().getType());
    if (!isa<FloatType>(type.getElementType()) || !type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a static float tensor");

    Location loc = op.getLoc();
    Value bias = producer.getDpsInputs()[0];
    // The init as the elementwise add reads it: identity on the result.
    AffineMap identity =
        rewriter.getMultiDimIdentityMap(type.getRank());
    AffineMap biasMap = composeThroughProducer(producer, identity);

    Value zero = arith::ConstantOp::create(
        rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType());
    Value filled =
        linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
    rewriter.modifyOpInPlace(op, [&] { initOperand->set(filled); });

    rewriter.setInsertionPointAfter(op);
    Value sum = op->getResult(0);
    Value outEmpty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                             type.getElementType());
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    auto add = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{sum, bias},
        ValueRange{outEmpty},
        ArrayRef<AffineMap>{identity, biasMap, identity}, iterators,
        [](OpBuilder &builder, Location loc, ValueRange args) {
          Value result = arith::AddFOp::create(builder, loc, args[0], args[1]);
          linalg::YieldOp::create(builder, loc, result);
        });
    rewriter.replaceAllUsesExcept(sum, add.getResult(0), add);
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] bias of the op at " << loc
                            << " read through " << biasMap << "\n");
    return success();
  }
};

struct SplitBiasFromInitsPass
    : ke::impl::SplitBiasFromInitsPassBase<SplitBiasFromInitsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitBiasFromInit>(&getContext());
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace

//===- ConvsToChannelsLast.cpp - Channels-first convolutions to NHWC ------===//
//
// ke-convs-to-channels-last (ke/Graph/Passes.td). PyTorch's convolutions
// are channels-first (NCHW input, FCHW filter), and torch-mlir imports them
// as linalg.conv_{1,2,3}d_nc*_fc*. Channels-first, a thread's register tile
// cannot span output channels and columns with contiguous loads, and the
// GPU rules could only give these convolutions the contraction schedule:
// one thread looping over the batch with scalar code, 0.01-0.1x of cuDNN on
// KernelBench (H200, 2026-11-24). Channels-last (NHWC input, HWCF filter)
// is the layout the convolution schedules are built for (docs/gpu.md:
// register tiles of output columns x channels, vector loads of both).
//
// The rewrite: the input and the filter are transposed (a copy each; the
// filter is small), the convolution runs channels-last into a
// channels-last init (a fill of the same value when the init is a fill,
// a transpose of it otherwise), and its result is transposed back to the
// channels-first type. ke-fold-broadcasts-into-consumers then folds that
// last transpose into the elementwise ops that read it.
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-convs-to-channels-last"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_CONVSTOCHANNELSLASTPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

/// The permutations of one spatial rank: input and init N C S... -> N S...
/// C, filter F C S... -> S... C F, result N S... F -> N F S....
struct ChannelsLastPerms {
  SmallVector<int64_t> input, filter, result;

  explicit ChannelsLastPerms(int64_t spatial) {
    input.push_back(0);
    for (int64_t s = 0; s < spatial; ++s)
      input.push_back(2 + s);
    input.push_back(1);
    for (int64_t s = 0; s < spatial; ++s)
      filter.push_back(2 + s);
    filter.push_back(1);
    filter.push_back(0);
    result.push_back(0);
    result.push_back(spatial + 1);
    for (int64_t s = 0; s < spatial; ++s)
      result.push_back(1 + s);
  }
};

/// The channels-last init: a fill of the same value when `init` is one (no
/// copy of the output), else `init` transposed.
Value channelsLastInit(PatternRewriter &rewriter, Location loc, Value init,
                       ArrayRef<int64_t> perm) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return linalg::FillOp::create(rewriter, loc, fill.getInputs()[0],
                                  ke::createPermutedEmpty(rewriter, loc, init, perm))
        .getResult(0);
  return ke::createTranspose(rewriter, loc, init, perm);
}

template <typename SourceOp, typename TargetOp, int64_t Spatial>
struct ConvToChannelsLast : OpRewritePattern<SourceOp> {
  using OpRewritePattern<SourceOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(SourceOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    for (Value operand : op->getOperands())
      if (!cast<RankedTensorType>(operand.getType()).hasStaticShape())
        return rewriter.notifyMatchFailure(op, "dynamic shape");
    ChannelsLastPerms perms(Spatial);
    Location loc = op.getLoc();
    Value input = ke::createTranspose(rewriter, loc, op.getInputs()[0], perms.input);
    Value filter =
        ke::createTranspose(rewriter, loc, op.getInputs()[1], perms.filter);
    Value init =
        channelsLastInit(rewriter, loc, op.getOutputs()[0], perms.input);
    auto conv = TargetOp::create(rewriter, loc, TypeRange{init.getType()},
                                 ValueRange{input, filter}, ValueRange{init},
                                 op.getStrides(), op.getDilations());
    Value result =
        ke::createTranspose(rewriter, loc, conv.getResult(0), perms.result);
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << op->getName() << " at "
                            << loc << " -> " << conv->getName() << "\n");
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvsToChannelsLastPass
    : ke::impl::ConvsToChannelsLastPassBase<ConvsToChannelsLastPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<
        ConvToChannelsLast<linalg::Conv1DNcwFcwOp, linalg::Conv1DNwcWcfOp, 1>,
        ConvToChannelsLast<linalg::Conv2DNchwFchwOp, linalg::Conv2DNhwcHwcfOp,
                           2>,
        ConvToChannelsLast<linalg::Conv3DNcdhwFcdhwOp,
                           linalg::Conv3DNdhwcDhwcfOp, 3>>(&getContext());
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace

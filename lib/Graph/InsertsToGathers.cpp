//===- InsertsToGathers.cpp - Strided inserts and pads as generics -------===//
//
// ke-inserts-to-gathers (ke/Graph/Passes.td). Between kernel groups, a
// whole-model GPU library moves data with box copies (cuMemcpy3D), which
// have no element strides and at most three dimensions. Two imports need
// more:
// - torch-mlir imports a strided ConvTranspose by inserting its input into
//   a zero tensor at every `stride`-th position (`tensor.insert_slice ...
//   [1, 1, 2, 2]`), which no box copy can do (ke-conv-transpose-phases
//   takes most of these first);
// - a padding (`tensor.pad`, or a unit-stride insert into a fill: a
//   stride-1 ConvTranspose's) is a fill and then a box copy per leading
//   index past the third dimension: 1025 copies of 16 x 64 x 34^3 (157 KB
//   each, launch-bound) took 2.1 ms of KernelBench level2/61's 11.3 ms on
//   an H200 (2026-11-29), and the 2-D copies of level2/19 ran at 1.3 TB/s.
// Each becomes an elementwise generic over the destination that reads the
// source with tensor.extract where a position is one of the inserted ones,
// and yields the background (the fill's or the padding's value, or the
// destination's) elsewhere: one kernel like any other, on every target,
// which writes each element once. Unit-stride inserts into anything but a
// fill stay box copies.
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-inserts-to-gathers"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_INSERTSTOGATHERSPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

/// A strided insert into anything, or a unit-stride one into a fill.
struct InsertToGather : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::InsertSliceOp insert,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> offsets = insert.getStaticOffsets();
    ArrayRef<int64_t> sizes = insert.getStaticSizes();
    ArrayRef<int64_t> strides = insert.getStaticStrides();
    if (ShapedType::isDynamicShape(offsets) ||
        ShapedType::isDynamicShape(sizes) ||
        ShapedType::isDynamicShape(strides))
      return rewriter.notifyMatchFailure(insert, "dynamic slice");
    RankedTensorType destType = insert.getDestType();
    if (!destType.hasStaticShape())
      return rewriter.notifyMatchFailure(insert, "dynamic destination");
    // A destination filled with one value (the zeros of a ConvTranspose)
    // is that value where nothing is inserted: the generic then writes
    // every element and reads no init, and the fill goes.
    Value init = insert.getDest();
    Value background;
    if (auto fill = init.getDefiningOp<linalg::FillOp>();
        fill && fill.hasPureTensorSemantics()) {
      background = fill.getInputs()[0];
      init = fill.getOutputs()[0];
    }
    if (!background && llvm::all_of(strides, [](int64_t s) { return s == 1; }))
      return rewriter.notifyMatchFailure(insert,
                                         "unit strides into data: a box copy");
    Value gather = ke::createInsertGather(
        rewriter, insert.getLoc(), destType, init, background,
        insert.getSource(), offsets, sizes, strides, insert.getDroppedDims());
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] insert at " << insert.getLoc()
                            << " into a gather\n");
    rewriter.replaceOp(insert, gather);
    return success();
  }
};

/// A tensor.pad of static amounts whose value is defined outside it.
struct PadToGather : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::PadOp pad,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = pad.getResultType();
    if (!type.hasStaticShape() || !pad.getSourceType().hasStaticShape() ||
        ShapedType::isDynamicShape(pad.getStaticLow()))
      return rewriter.notifyMatchFailure(pad, "dynamic shape or amounts");
    Value background = pad.getConstantPaddingValue();
    if (!background)
      return rewriter.notifyMatchFailure(pad, "padding computed per element");
    Location loc = pad.getLoc();
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType());
    SmallVector<int64_t> strides(type.getRank(), 1);
    Value gather = ke::createInsertGather(
        rewriter, loc, type, empty, background, pad.getSource(),
        pad.getStaticLow(), pad.getSourceType().getShape(), strides,
        llvm::SmallBitVector(type.getRank()));
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] pad at " << loc
                            << " into a gather\n");
    rewriter.replaceOp(pad, gather);
    return success();
  }
};

struct InsertsToGathersPass
    : ke::impl::InsertsToGathersPassBase<InsertsToGathersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<InsertToGather, PadToGather>(&getContext());
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace

//===- GpuFlattenVectorCasts.cpp - n-D float casts as 1-D ones ------------===//
//
// ke-gpu-flatten-vector-casts (ke/Codegen/Passes.td), a step of the GPU
// lowering. A bf16 convolution with an f32 result (torch-mlir's bf16
// Conv1d) vectorizes into `arith.extf %x : vector<1x3x1xbf16> to
// vector<1x3x1xf32>`; the NVVM conversion lowers bf16 casts of 1-D vectors
// only and left an unrealized cast of the n-D one, which translation to
// LLVM IR rejects. Each float cast of an n-D vector becomes one cast per
// innermost row: vector.extract of the row, the 1-D cast, vector.insert
// into the result.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_GPUFLATTENVECTORCASTSPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

template <typename CastOp> struct FlattenVectorCast : OpRewritePattern<CastOp> {
  using OpRewritePattern<CastOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto source = dyn_cast<VectorType>(op.getIn().getType());
    auto result = dyn_cast<VectorType>(op.getType());
    if (!source || !result || source.getRank() < 2 || source.isScalable())
      return rewriter.notifyMatchFailure(op, "not a fixed n-D vector");
    // One 1-D cast per innermost row, extracted and inserted back: the
    // n-D extract and insert lower to LLVM arrays of vectors directly.
    Location loc = op.getLoc();
    ArrayRef<int64_t> shape = source.getShape();
    int64_t rowLength = shape.back();
    auto rowType = VectorType::get({rowLength}, result.getElementType());
    Value accumulated = arith::ConstantOp::create(rewriter, loc, result,
                                                  rewriter.getZeroAttr(result));
    SmallVector<int64_t> position(shape.size() - 1, 0);
    int64_t rows = source.getNumElements() / rowLength;
    for (int64_t row = 0; row < rows; ++row) {
      Value part =
          vector::ExtractOp::create(rewriter, loc, op.getIn(), position);
      Value cast = CastOp::create(rewriter, loc, rowType, part);
      accumulated =
          vector::InsertOp::create(rewriter, loc, cast, accumulated, position);
      // The next position, the last leading dimension fastest.
      for (int64_t d = position.size() - 1; d >= 0; --d) {
        if (++position[d] < shape[d])
          break;
        position[d] = 0;
      }
    }
    rewriter.replaceOp(op, accumulated);
    return success();
  }
};

struct GpuFlattenVectorCastsPass
    : ke::impl::GpuFlattenVectorCastsPassBase<GpuFlattenVectorCastsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FlattenVectorCast<arith::ExtFOp>,
                 FlattenVectorCast<arith::TruncFOp>>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

//===- StridedInsertsToGathers.cpp - Strided insert_slice as a generic ----===//
//
// ke-strided-inserts-to-gathers (ke/Graph/Passes.td). torch-mlir imports a
// strided ConvTranspose by inserting the input into a zero tensor at every
// `stride`-th position (`tensor.insert_slice ... [1, 1, 2, 2]`), then
// running a plain convolution. Between kernel groups, a whole-model GPU
// library moves data with box copies (cuMemcpy3D), which have no element
// strides. The insert becomes an elementwise generic over the destination
// that reads the source with tensor.extract where a position is one of the
// inserted ones, and keeps the destination's value elsewhere: one kernel
// like any other, on every target.
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-strided-inserts-to-gathers"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_STRIDEDINSERTSTOGATHERSPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

struct StridedInsertToGather : OpRewritePattern<tensor::InsertSliceOp> {
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
    if (llvm::all_of(strides, [](int64_t s) { return s == 1; }))
      return rewriter.notifyMatchFailure(insert, "unit strides: a box copy");
    RankedTensorType destType = insert.getDestType();
    if (!destType.hasStaticShape())
      return rewriter.notifyMatchFailure(insert, "dynamic destination");

    Location loc = insert.getLoc();
    unsigned rank = destType.getRank();
    llvm::SmallBitVector dropped = insert.getDroppedDims();
    Value source = insert.getSource();
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
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{destType}, ValueRange{},
        ValueRange{init}, ArrayRef<AffineMap>{identity}, iterators,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          auto index = [&](int64_t v) {
            return arith::ConstantIndexOp::create(b, loc, v).getResult();
          };
          Value zero = index(0);
          Value inside;
          SmallVector<Value> sourceIndices;
          for (unsigned d = 0; d < rank; ++d) {
            // rel = i - offset; inserted where 0 <= rel < size * stride and
            // rel % stride == 0, from source position rel / stride.
            Value i = linalg::IndexOp::create(b, loc, d);
            Value rel = arith::SubIOp::create(b, loc, i, index(offsets[d]));
            Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                              rel, zero);
            Value high = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::slt, rel,
                index(sizes[d] * strides[d]));
            Value step = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::eq,
                arith::RemSIOp::create(b, loc, rel, index(strides[d])), zero);
            Value here = arith::AndIOp::create(
                b, loc, arith::AndIOp::create(b, loc, low, high), step);
            inside = inside ? arith::AndIOp::create(b, loc, inside, here)
                                  .getResult()
                            : here;
            if (dropped.test(d))
              continue;
            // Clamped into the source where the position is not inserted,
            // so that the read stays in bounds.
            Value position = arith::SelectOp::create(
                b, loc, here,
                arith::DivSIOp::create(b, loc, rel, index(strides[d])), zero);
            sourceIndices.push_back(position);
          }
          Value value =
              tensor::ExtractOp::create(b, loc, source, sourceIndices);
          Value result = arith::SelectOp::create(
              b, loc, inside, value, background ? background : args[0]);
          linalg::YieldOp::create(b, loc, result);
        });
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] strided insert at " << loc
                            << " into a gather\n");
    rewriter.replaceOp(insert, generic.getResults());
    return success();
  }
};

struct StridedInsertsToGathersPass
    : ke::impl::StridedInsertsToGathersPassBase<StridedInsertsToGathersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedInsertToGather>(&getContext());
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace

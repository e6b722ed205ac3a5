//===- WidenAccumulators.cpp - bf16/f16 sums accumulated in f32 -----------===//
//
// ke-widen-accumulators (ke/Graph/Passes.td). A model cast to bf16 (as
// KernelBench's precision option does) reaches ke with its reductions in
// bf16: `sum(x)` over 4096 values accumulates into a bf16 whose 8 bits of
// mantissa stop absorbing terms once the sum is a few hundred times larger
// than each (KernelBench's sum reduction was off by 1.9e3; means, average
// pooling and the statistics of norms were off by up to 1.6). PyTorch's
// kernels accumulate low-precision floats in f32; so does ke after this
// pass:
//
//   %init'  = the init in f32 (a fill of the widened constant, or an extf)
//   %r'     = the generic, its accumulator f32: each term is extended to
//             f32 before the combining op, which then runs in f32
//   %r      = truncf of %r' to the original type
//
// Only sums are widened (addf: the rounding of max and min is exact): a
// generic whose body is `addf(acc, f(inputs))` with the accumulator read
// once, and the named sum poolings (average pooling's window sums; named
// ops cast their inputs to the output's type, so only the init and the
// result change).
//
//===----------------------------------------------------------------------===//

#include "ke/Graph/Passes.h"

#include "GraphSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-widen-accumulators"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_WIDENACCUMULATORSPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

/// `value` cast elementwise to `element` (extf to a wider float, truncf to
/// a narrower one).
Value castTensor(PatternRewriter &rewriter, Location loc, Value value,
                 Type element) {
  return ke::createElementwiseConversion(
      rewriter, loc, value, element,
      [&](OpBuilder &b, Location nested, Value in) -> Value {
        if (element.getIntOrFloatBitWidth() >
            in.getType().getIntOrFloatBitWidth())
          return arith::ExtFOp::create(b, nested, element, in);
        return arith::TruncFOp::create(b, nested, element, in);
      });
}

/// `init` in f32: a fill of a constant is widened exactly (a constant, not
/// an extf: a kernel takes scalars only as constants); anything else is
/// extended elementwise.
Value widenInit(PatternRewriter &rewriter, Location loc, Value init,
                Type wide) {
  auto type = cast<RankedTensorType>(init.getType());
  FloatAttr constant;
  if (auto fill = init.getDefiningOp<linalg::FillOp>();
      fill && matchPattern(fill.getInputs()[0], m_Constant(&constant))) {
    APFloat value = constant.getValue();
    bool lost = false;
    value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), wide);
    Value scalar = arith::ConstantOp::create(
        rewriter, loc, rewriter.getF32FloatAttr(value.convertToFloat()));
    return linalg::FillOp::create(rewriter, loc, scalar, empty).getResult(0);
  }
  return castTensor(rewriter, loc, init, wide);
}

bool isLowPrecisionFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<BFloat16Type, Float16Type>(tensor.getElementType());
}

/// A sum pooling (average pooling's window sums) into bf16 or f16: the same
/// op into an f32 init (named ops cast their inputs to the output type),
/// then truncf.
template <typename PoolingOp>
struct WidenPoolingSum : OpRewritePattern<PoolingOp> {
  using OpRewritePattern<PoolingOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(PoolingOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
        !isLowPrecisionFloatTensor(op->getResult(0).getType()))
      return rewriter.notifyMatchFailure(op, "not a bf16/f16 tensor sum");
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Location loc = op.getLoc();
    Type wide = rewriter.getF32Type();
    Value wideInit =
        widenInit(rewriter, loc, op.getDpsInitOperand(0)->get(), wide);
    SmallVector<NamedAttribute> attributes;
    for (StringRef name : {"strides", "dilations"})
      if (Attribute attribute = op->getAttr(name))
        attributes.push_back(rewriter.getNamedAttr(name, attribute));
    auto widened =
        PoolingOp::create(rewriter, loc, TypeRange{wideInit.getType()},
                          op.getDpsInputs(), ValueRange{wideInit}, attributes);
    widened->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, castTensor(rewriter, loc, widened->getResult(0),
                                      resultType.getElementType()));
    return success();
  }
};

struct WidenSumAccumulator : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
        op->getNumResults() != 1 || op.getNumReductionLoops() == 0)
      return rewriter.notifyMatchFailure(op, "not a one-result reduction");
    if (!isLowPrecisionFloatTensor(op->getResult(0).getType()))
      return rewriter.notifyMatchFailure(op, "not a bf16/f16 accumulator");
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Block *body = op.getBody();
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    BlockArgument acc = body->getArguments().back();
    auto add = yield->getOperand(0).getDefiningOp<arith::AddFOp>();
    if (!add || add->getBlock() != body || !acc.hasOneUse() ||
        (add.getLhs() != acc && add.getRhs() != acc))
      return rewriter.notifyMatchFailure(op, "not addf(acc, f(inputs))");
    Value term = add.getLhs() == acc ? add.getRhs() : add.getLhs();

    Location loc = op.getLoc();
    Type wide = rewriter.getF32Type();
    Value wideInit =
        widenInit(rewriter, loc, op.getDpsInitOperand(0)->get(), wide);
    auto widened = linalg::GenericOp::create(
        rewriter, loc, wideInit.getType(), op.getDpsInputs(),
        ValueRange{wideInit}, op.getIndexingMapsArray(),
        op.getIteratorTypesArray(),
        [&](OpBuilder &b, Location nested, ValueRange args) {
          IRMapping mapping;
          for (auto [old, now] :
               llvm::zip(body->getArguments().drop_back(), args.drop_back()))
            mapping.map(old, now);
          for (Operation &inner : body->without_terminator())
            if (&inner != add.getOperation())
              b.clone(inner, mapping);
          Value wideTerm = arith::ExtFOp::create(b, nested, wide,
                                                 mapping.lookupOrDefault(term));
          Value sum = arith::AddFOp::create(b, nested, wideTerm, args.back(),
                                            add.getFastmathAttr());
          linalg::YieldOp::create(b, nested, sum);
        });
    widened->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    Value narrowed = castTensor(rewriter, loc, widened.getResult(0),
                                resultType.getElementType());
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] widened " << op << "\n");
    rewriter.replaceOp(op, narrowed);
    return success();
  }
};

struct WidenAccumulatorsPass
    : ke::impl::WidenAccumulatorsPassBase<WidenAccumulatorsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<WidenSumAccumulator, WidenPoolingSum<linalg::PoolingNcwSumOp>,
                 WidenPoolingSum<linalg::PoolingNwcSumOp>,
                 WidenPoolingSum<linalg::PoolingNchwSumOp>,
                 WidenPoolingSum<linalg::PoolingNhwcSumOp>,
                 WidenPoolingSum<linalg::PoolingNdhwcSumOp>>(&getContext());
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace

//===- FoldExtensionsIntoContractions.cpp - 16-bit operands kept ----------===//
//
// ke-fold-extensions-into-contractions (ke/Graph/Passes.td). torch-mlir
// imports a bf16 or f16 nn.Linear (a model cast to bf16, as KernelBench's
// precision option does) as an extension of both operands to f32 feeding
// an f32 linalg.matmul: ke would run the extensions as memory-bound kernels
// of their own (the weight written back in f32, twice its size) and the
// matmul on f32, where no tensor core takes it. linalg.matmul and
// linalg.batch_matmul extend their operands to the result's type
// themselves, so reading the 16-bit values directly is the same
// computation, bit for bit: each product is of the same exactly extended
// values, accumulated in f32.
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-fold-extensions-into-contractions"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_FOLDEXTENSIONSINTOCONTRACTIONSPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

/// The 16-bit float tensor `value` extends to f32, when a linalg.generic
/// on tensors does nothing but that (all loops parallel, identity maps,
/// one arith.extf), else null.
Value getExtendedNarrowFloat(Value value) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || !generic.hasPureTensorSemantics() ||
      generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return {};
  Block &body = generic.getRegion().front();
  auto extf = dyn_cast<arith::ExtFOp>(body.front());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 2 || !extf ||
      extf.getIn() != body.getArgument(0) ||
      yield.getValues().front() != extf.getResult())
    return {};
  Value input = generic.getDpsInputs()[0];
  Type from = getElementTypeOrSelf(input.getType());
  return from.isF16() || from.isBF16() ? input : Value();
}

/// Reads the 16-bit tensors that extensions of `op`'s inputs extend.
template <typename ContractionOp>
struct FoldExtensionIntoContraction : OpRewritePattern<ContractionOp> {
  using OpRewritePattern<ContractionOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
    if (!linalgOp.hasPureTensorSemantics() ||
        !getElementTypeOrSelf(linalgOp.getDpsInits()[0].getType()).isF32())
      return rewriter.notifyMatchFailure(op, "not an f32 result on tensors");
    SmallVector<Value> inputs(linalgOp.getDpsInputs());
    bool folded = false;
    for (Value &input : inputs)
      if (Value narrow = getExtendedNarrowFloat(input)) {
        input = narrow;
        folded = true;
      }
    if (!folded)
      return rewriter.notifyMatchFailure(op, "no extended input");
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << op->getName() << "\n");
    // A new op: the body's block arguments take the operands' types (its
    // region builder extends them).
    auto narrowed = ContractionOp::create(rewriter, op.getLoc(),
                                          op->getResultTypes(), inputs,
                                          linalgOp.getDpsInits());
    narrowed.setIndexingMapsAttr(op.getIndexingMaps());
    narrowed->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, narrowed->getResults());
    return success();
  }
};

struct FoldExtensionsIntoContractionsPass
    : ke::impl::FoldExtensionsIntoContractionsPassBase<
          FoldExtensionsIntoContractionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldExtensionIntoContraction<linalg::MatmulOp>,
                 FoldExtensionIntoContraction<linalg::BatchMatmulOp>>(
        &getContext());
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace

//===- ExpandMath.cpp - Math ops LLVM's CPU lowering cannot take ----------===//
//
// ke-expand-math (ke/Codegen/Passes.td), the first step of the CPU and GPU
// lowerings: exact GELU (math.erf) and torch-mlir's `x ** 2` (math.fpowi
// with an i64 exponent) would otherwise fail in translation to LLVM IR on
// the CPU, and call libdevice's __nv_powif(float, int) with an i64 on
// NVIDIA GPUs; math.absi on n-D vectors has no LLVM lowering at all.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_EXPANDMATHPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// math.absi on vectors of two or more dimensions, which convert-math-to-
/// llvm leaves alone (it lowers scalars and 1-D vectors to llvm.intr.abs),
/// as max(x, 0 - x): exact, INT_MIN included (0 - INT_MIN wraps to INT_MIN,
/// which llvm.intr.abs without the poison flag returns too).
struct ExpandMultiDimAbsI final : OpRewritePattern<math::AbsIOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::AbsIOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(op.getType());
    if (!type || type.getRank() < 2)
      return failure();
    Location loc = op.getLoc();
    Value zero = arith::ConstantOp::create(rewriter, loc, type,
                                           rewriter.getZeroAttr(type));
    Value negated =
        arith::SubIOp::create(rewriter, loc, zero, op.getOperand());
    rewriter.replaceOpWithNewOp<arith::MaxSIOp>(op, op.getOperand(), negated);
    return success();
  }
};

/// The math ops rewritten into upstream's polynomial approximations on the
/// CPU (erf and erfc aside, which have patterns of their own).
bool isApproximated(StringRef name) {
  return llvm::is_contained({"math.exp", "math.expm1", "math.tanh",
                             "math.log", "math.log1p", "math.log2"},
                            name);
}

struct ExpandMathPass : ke::impl::ExpandMathPassBase<ExpandMathPass> {
  using ExpandMathPassBase::ExpandMathPassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    math::populateExpansionPatterns(patterns, {"fpowi"});
    patterns.add<ExpandMultiDimAbsI>(&getContext());
    if (approximateErf) {
      populatePolynomialApproximateErfPattern(patterns);
      populatePolynomialApproximateErfcPattern(patterns);
    }
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (approximateErf) {
      // The transcendental functions of activations, norms and losses as
      // upstream's polynomials (within a few ulp of libm's): LLVM has no
      // vector form of them without a vector math library, so a vectorized
      // row of exponentials, or a tanh GELU's epilogue, became one libm call
      // per element (examples/mlp.mlir's first matmul + tanh GELU ran at a
      // fifth of the second matmul's GFLOP/s). Scalars and fixed-length
      // vectors only: on scalable ones (cpu:aarch64) the rewrite left
      // log_softmax's kernel without scalable code.
      SmallVector<Operation *> ops;
      getOperation()->walk([&](Operation *op) {
        if (!isApproximated(op->getName().getStringRef()) ||
            op->getNumResults() != 1)
          return;
        auto vector = dyn_cast<VectorType>(op->getResult(0).getType());
        if (!vector || !vector.isScalable())
          ops.push_back(op);
      });
      RewritePatternSet approximations(&getContext());
      populateMathPolynomialApproximationPatterns(approximations,
                                                  isApproximated);
      if (failed(applyOpPatternsGreedily(ops, std::move(approximations))))
        return signalPassFailure();
    }
    if (!expandBf16Casts)
      return;
    // Not inside linalg ops: a named op's body (a bf16 matmul's extf) must
    // keep the form convert-linalg-to-loops expects.
    SmallVector<Operation *> casts;
    getOperation()->walk([&](Operation *op) {
      if (isa<arith::ExtFOp, arith::TruncFOp>(op) &&
          !op->getParentOfType<linalg::LinalgOp>())
        casts.push_back(op);
    });
    RewritePatternSet bf16(&getContext());
    arith::populateExpandBFloat16Patterns(bf16);
    if (failed(applyOpPatternsGreedily(casts, std::move(bf16))))
      signalPassFailure();
  }
};

} // namespace

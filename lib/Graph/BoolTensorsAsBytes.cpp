//===- BoolTensorsAsBytes.cpp - i1 tensors between kernels stored as i8 ---===//
//
// ke-bool-tensors-as-bytes (ke/Graph/Passes.td). A tensor of i1 that one
// kernel writes and another reads (cross-entropy's mask of valid targets,
// read by the gather and by the count) lives in memory between them. The
// vectorized writer stores vector<8xi1>, which LLVM packs into bits of one
// byte, while a scalar reader loads one byte per element: the reader saw
// the mask of element 0 spread over the first eight, and cross-entropy's
// loss was off by 2 to 6. Stored as i8 (extui in the writer, trunci in each
// reader's body), both sides agree on one byte per element.
//
// The writer must be a generic whose i1 result is computed from its inputs
// alone (its init is not read); readers that are generics read the i8
// tensor directly, any other reader gets an elementwise trunci of its own.
// The lowerings' ke-scalarize-bool-transfers makes i1 buffers correct by
// accessing them a byte at a time (function arguments and results stay
// i1); as i8 the tensors passed between kernels keep vectorized accesses.
//
//===----------------------------------------------------------------------===//

#include "ke/Graph/Passes.h"

#include "GraphSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-bool-tensors-as-bytes"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_BOOLTENSORSASBYTESPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

bool isBoolTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isInteger(1);
}

/// The elementwise `trunci(bytes)` back to i1.
Value truncateToBool(PatternRewriter &rewriter, Location loc, Value bytes) {
  return ke::createElementwiseConversion(
      rewriter, loc, bytes, rewriter.getI1Type(),
      [](OpBuilder &b, Location nested, Value in) -> Value {
        return arith::TruncIOp::create(b, nested, b.getI1Type(), in);
      });
}

struct StoreBoolResultAsBytes : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
        !isBoolTensor(op->getResult(0).getType()) || op->use_empty())
      return rewriter.notifyMatchFailure(op, "no i1 tensor result in use");
    // Only the truncation this pass makes reads i8 back into i1 alone.
    if (llvm::all_of(op->getUsers(), [&](Operation *user) {
          return isa<func::ReturnOp>(user);
        }))
      return rewriter.notifyMatchFailure(op, "only returned");
    Block *body = op.getBody();
    if (!body->getArguments().back().use_empty())
      return rewriter.notifyMatchFailure(op, "reads its init");
    if (op.getNumDpsInputs() == 1 && op.getBody()->getOperations().size() == 2)
      if (auto trunc = dyn_cast<arith::TruncIOp>(body->front());
          trunc && trunc.getIn() == body->getArgument(0))
        return rewriter.notifyMatchFailure(op, "is the truncation itself");

    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    Type byte = rewriter.getI8Type();
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), byte);
    auto bytes = linalg::GenericOp::create(
        rewriter, loc, empty.getType(), op.getDpsInputs(), ValueRange{empty},
        op.getIndexingMapsArray(), op.getIteratorTypesArray());
    rewriter.cloneRegionBefore(op.getRegion(), bytes.getRegion(),
                               bytes.getRegion().begin());
    bytes->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    Block *newBody = bytes.getBody();
    newBody->getArguments().back().setType(byte);
    auto yield = cast<linalg::YieldOp>(newBody->getTerminator());
    rewriter.setInsertionPoint(yield);
    Value widened =
        arith::ExtUIOp::create(rewriter, loc, byte, yield->getOperand(0));
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(0, widened); });

    Value result = bytes.getResult(0);
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op->getResult(0).getUses())
      uses.push_back(&use);
    Value truncated;
    for (OpOperand *use : uses) {
      auto reader = dyn_cast<linalg::GenericOp>(use->getOwner());
      if (reader && reader.isDpsInput(use)) {
        // The reader's block argument becomes i8, truncated where it starts.
        BlockArgument arg = reader.getMatchingBlockArgument(use);
        rewriter.modifyOpInPlace(reader, [&] {
          use->set(result);
          arg.setType(byte);
        });
        rewriter.setInsertionPointToStart(reader.getBody());
        Value bit =
            arith::TruncIOp::create(rewriter, loc, rewriter.getI1Type(), arg);
        rewriter.replaceAllUsesExcept(arg, bit, bit.getDefiningOp());
        continue;
      }
      if (!truncated) {
        rewriter.setInsertionPointAfter(bytes);
        truncated = truncateToBool(rewriter, loc, result);
      }
      rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(truncated); });
    }
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << uses.size()
                            << " readers of an i1 tensor read bytes\n");
    rewriter.eraseOp(op);
    return success();
  }
};

struct BoolTensorsAsBytesPass
    : ke::impl::BoolTensorsAsBytesPassBase<BoolTensorsAsBytesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StoreBoolResultAsBytes>(&getContext());
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace

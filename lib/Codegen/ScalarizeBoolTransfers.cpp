//===- ScalarizeBoolTransfers.cpp - i1 vectors to memory one byte each ----===//
//
// ke-scalarize-bool-transfers (ke/Codegen/Passes.td), a step of the CPU and
// GPU lowerings. A buffer of i1 holds one byte per element (a bool tensor of
// PyTorch, an i1 memref lowered by MLIR: LLVM stores an i1 as a byte), but
// LLVM stores and loads a `<8 x i1>` vector as the 8 bits of one byte. A
// vectorized kernel thus read a bool input's first byte as eight elements
// and wrote a bool output as packed bits (`torch.where(mask, x, 0)` and
// `x > 0` were wrong on every target). 1-D transfers, loads and stores of
// i1 vectors on memrefs become one scalar access per element.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_SCALARIZEBOOLTRANSFERSPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// A fixed 1-D vector of i1 accessed in a memref of i1.
bool isBoolVectorOnMemref(VectorType vector, Value base) {
  auto memref = dyn_cast<MemRefType>(base.getType());
  return vector && memref && vector.getRank() == 1 && !vector.isScalable() &&
         vector.getElementType().isInteger(1) &&
         memref.getElementType().isInteger(1);
}

/// The indices of element `k`: `indices` with `k` added to the memref
/// dimension that the vector runs along (none: a broadcast read).
SmallVector<Value> elementIndices(OpBuilder &b, Location loc,
                                  ValueRange indices,
                                  std::optional<unsigned> dim, int64_t k) {
  SmallVector<Value> result(indices.begin(), indices.end());
  if (dim && k != 0)
    result[*dim] = arith::AddIOp::create(
        b, loc, result[*dim], arith::ConstantIndexOp::create(b, loc, k));
  return result;
}

/// The memref dimension a 1-D transfer's map reads along; none for a
/// broadcast (`(d0, d1) -> (0)`); failure for anything else.
FailureOr<std::optional<unsigned>> getTransferDim(AffineMap map) {
  if (map.getNumResults() != 1)
    return failure();
  if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(0)))
    return std::optional<unsigned>(dim.getPosition());
  if (auto constant = dyn_cast<AffineConstantExpr>(map.getResult(0));
      constant && constant.getValue() == 0)
    return std::optional<unsigned>();
  return failure();
}

/// Loads element `k`, guarded by a bounds check unless `inBounds`.
Value loadElement(PatternRewriter &rewriter, Location loc, Value base,
                  ValueRange indices, std::optional<unsigned> dim, int64_t k,
                  bool inBounds, Value padding) {
  SmallVector<Value> at = elementIndices(rewriter, loc, indices, dim, k);
  if (inBounds || !dim)
    return memref::LoadOp::create(rewriter, loc, base, at);
  Value size = memref::DimOp::create(rewriter, loc, base, *dim);
  Value inside = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                                       at[*dim], size);
  auto guarded = scf::IfOp::create(
      rewriter, loc, inside,
      [&](OpBuilder &b, Location l) {
        scf::YieldOp::create(
            b, l, ValueRange{memref::LoadOp::create(b, l, base, at)});
      },
      [&](OpBuilder &b, Location l) {
        scf::YieldOp::create(b, l, ValueRange{padding});
      });
  return guarded.getResult(0);
}

/// Stores element `k`, guarded by a bounds check unless `inBounds`.
void storeElement(PatternRewriter &rewriter, Location loc, Value value,
                  Value base, ValueRange indices, unsigned dim, int64_t k,
                  bool inBounds) {
  SmallVector<Value> at = elementIndices(rewriter, loc, indices, dim, k);
  if (inBounds) {
    memref::StoreOp::create(rewriter, loc, value, base, at);
    return;
  }
  Value size = memref::DimOp::create(rewriter, loc, base, dim);
  Value inside = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                                       at[dim], size);
  scf::IfOp::create(rewriter, loc, inside, [&](OpBuilder &b, Location l) {
    memref::StoreOp::create(b, l, value, base, at);
    scf::YieldOp::create(b, l);
  });
}

/// The vector of `type` read one element at a time (see loadElement).
Value loadRow(PatternRewriter &rewriter, Location loc, VectorType type,
              Value base, ValueRange indices, std::optional<unsigned> dim,
              bool inBounds, Value padding) {
  SmallVector<Value> elements;
  for (int64_t k = 0; k < type.getDimSize(0); ++k)
    elements.push_back(
        loadElement(rewriter, loc, base, indices, dim, k, inBounds, padding));
  return vector::FromElementsOp::create(rewriter, loc, type, elements);
}

/// `vector` written one element at a time (see storeElement).
void storeRow(PatternRewriter &rewriter, Location loc, Value vector, Value base,
              ValueRange indices, unsigned dim, bool inBounds) {
  int64_t count = cast<VectorType>(vector.getType()).getDimSize(0);
  for (int64_t k = 0; k < count; ++k) {
    Value element = vector::ExtractOp::create(rewriter, loc, vector, k);
    storeElement(rewriter, loc, element, base, indices, dim, k, inBounds);
  }
}

struct ScalarizeBoolRead : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getVectorType();
    if (!isBoolVectorOnMemref(type, op.getBase()) || op.getMask())
      return rewriter.notifyMatchFailure(op, "not an unmasked i1 read");
    FailureOr<std::optional<unsigned>> dim =
        getTransferDim(op.getPermutationMap());
    if (failed(dim))
      return rewriter.notifyMatchFailure(op, "not a 1-D or broadcast map");
    rewriter.replaceOp(op, loadRow(rewriter, op.getLoc(), type, op.getBase(),
                                   op.getIndices(), *dim, op.isDimInBounds(0),
                                   op.getPadding()));
    return success();
  }
};

struct ScalarizeBoolWrite : OpRewritePattern<vector::TransferWriteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferWriteOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getVectorType();
    if (!isBoolVectorOnMemref(type, op.getBase()) || op.getMask() ||
        !isa<MemRefType>(op.getBase().getType()))
      return rewriter.notifyMatchFailure(op, "not an unmasked i1 write");
    FailureOr<std::optional<unsigned>> dim =
        getTransferDim(op.getPermutationMap());
    if (failed(dim) || !*dim)
      return rewriter.notifyMatchFailure(op, "not a 1-D map");
    storeRow(rewriter, op.getLoc(), op.getVector(), op.getBase(),
             op.getIndices(), **dim, op.isDimInBounds(0));
    rewriter.eraseOp(op);
    return success();
  }
};

struct ScalarizeBoolLoad : OpRewritePattern<vector::LoadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::LoadOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getVectorType();
    if (!isBoolVectorOnMemref(type, op.getBase()))
      return rewriter.notifyMatchFailure(op, "not an i1 load");
    unsigned dim = op.getMemRefType().getRank() - 1;
    rewriter.replaceOp(op, loadRow(rewriter, op.getLoc(), type, op.getBase(),
                                   op.getIndices(), dim, /*inBounds=*/true,
                                   /*padding=*/nullptr));
    return success();
  }
};

struct ScalarizeBoolStore : OpRewritePattern<vector::StoreOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::StoreOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getVectorType();
    if (!isBoolVectorOnMemref(type, op.getBase()))
      return rewriter.notifyMatchFailure(op, "not an i1 store");
    unsigned dim = op.getMemRefType().getRank() - 1;
    storeRow(rewriter, op.getLoc(), op.getValueToStore(), op.getBase(),
             op.getIndices(), dim, /*inBounds=*/true);
    rewriter.eraseOp(op);
    return success();
  }
};

struct ScalarizeBoolTransfersPass
    : ke::impl::ScalarizeBoolTransfersPassBase<ScalarizeBoolTransfersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ScalarizeBoolRead, ScalarizeBoolWrite, ScalarizeBoolLoad,
                 ScalarizeBoolStore>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

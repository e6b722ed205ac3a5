//===- GpuRowNorm.cpp - Norm kernels for rows of any length ---------------===//
//
// ke-gpu-row-norm (ke/Codegen/Passes.td). gpu.rownorm gives an elementwise
// anchor and the row reductions it reads (layer norm's mean and variance,
// RMS norm's sum of squares, log-softmax's maximum and sum: getRowReductions
// in ke/Workload/Kernel.h) a block per row with tiled schedules when a warp
// multiple divides the row. Other rows (GPT-2's 50257, 4097) it marks
// `ke.rownorm = {row_threads, rows, vec, warp}` on the bufferized anchor,
// and this pass builds the kernel on RowKernelBuilder (GpuRowKernel.h):
//
//   reductions  in program order, each a pass over the thread's elements of
//               the row (vectors of `vec` where the op reads the row as
//               stored, columns past the row skipped): the reduction's own
//               body applied to a partial result that starts at its
//               combiner's neutral element; the row's threads combine their
//               partials with the combiner, and the fill's value is
//               combined in once. Later ops read the row's result as a
//               value, never from memory.
//   anchor      a last pass: the anchor's body per element, its result
//               stored as a vector.
//
// Operands the ops read as stored ((d0, ..., dn-1) -> (d0, ..., dn-1)) are
// loaded as vectors; other projected permutations (a column vector like a
// norm's weight, a broadcast) element by element at the loop indices (the
// leading ones from the row number). Everything is f32, as
// getRowReductions requires; the reductions are summed in a different
// order than sequentially, as every parallel schedule sums them.
//
//===----------------------------------------------------------------------===//

#include "GpuRowKernel.h"

#include "ke/Codegen/Passes.h"
#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

using namespace mlir;
using namespace ke;

namespace ke {
#define GEN_PASS_DEF_GPUROWNORMPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

constexpr llvm::StringLiteral kMark = "ke.rownorm";

/// A reduction of the kernel, with its fill and combiner.
struct RowReduction {
  linalg::LinalgOp op;
  linalg::FillOp fill;
  Operation *combiner;
};

/// A marked anchor with the reductions it reads.
struct RowNorm {
  linalg::LinalgOp anchor;
  SmallVector<RowReduction> reductions;
  /// The fill of the anchor's init, if any.
  linalg::FillOp anchorFill;
  SmallVector<int64_t> ranges;
  RowGeometry geometry;
};

/// The anchor and its reductions.
SmallVector<linalg::LinalgOp> getOps(const RowNorm &r) {
  SmallVector<linalg::LinalgOp> ops = {r.anchor};
  for (const RowReduction &reduction : r.reductions)
    ops.push_back(reduction.op);
  return ops;
}

bool isF32Buffer(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.getElementType().isF32() && type.hasStaticShape() &&
         type.getLayout().isIdentity();
}

FailureOr<RowNorm> analyze(linalg::LinalgOp anchor) {
  auto fail = [&](const Twine &why) {
    return anchor->emitError() << kMark << ": " << why;
  };
  RowNorm r;
  r.anchor = anchor;
  if (!anchor.hasPureBufferSemantics() || anchor.getNumDpsInits() != 1 ||
      anchor.getNumReductionLoops() != 0 || anchor.getNumLoops() < 2)
    return fail("expects a bufferized elementwise op of rank 2 or more");
  r.ranges = anchor.getStaticLoopRanges();
  unsigned rank = r.ranges.size();
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(rank, anchor->getContext());
  if (anchor.getMatchingIndexingMap(anchor.getDpsInitOperand(0)) != identity)
    return fail("expects the result written as stored");
  // The reductions: the ops marked as the anchor's, before it in its block.
  for (Operation *prev = anchor->getPrevNode(); prev;
       prev = prev->getPrevNode()) {
    auto op = dyn_cast<linalg::LinalgOp>(prev);
    if (!op || !op->hasAttr(kRowReductionAttr))
      continue;
    Operation *combiner = getReductionCombiner(op);
    if (!combiner || !isa<FloatType>(combiner->getResult(0).getType()) ||
        op.getStaticLoopRanges() != r.ranges)
      return fail("expects row reductions over the anchor's rows with a "
                  "float combiner");
    linalg::FillOp fill = findFillBefore(op, op.getDpsInits()[0]);
    if (!fill)
      return fail("expects each row reduction's init filled right before it");
    r.reductions.insert(r.reductions.begin(), {op, fill, combiner});
  }
  if (r.reductions.empty())
    return fail("expects the row reductions the op reads");
  for (linalg::LinalgOp op : getOps(r))
    for (OpOperand &operand : op->getOpOperands())
      if (!isF32Buffer(operand.get()) ||
          !op.getMatchingIndexingMap(&operand).isProjectedPermutation())
        return fail("expects static, contiguous f32 operands read through "
                    "projected permutations");
  // A reduction's result is a value of the row: every op reads it as such.
  AffineMap rowMap = identity.getMajorSubMap(rank - 1);
  for (RowReduction &reduction : r.reductions)
    for (linalg::LinalgOp op : getOps(r))
      for (OpOperand *operand : op.getDpsInputOperands())
        if (operand->get() == reduction.op.getDpsInits()[0] &&
            op.getMatchingIndexingMap(operand) != rowMap)
          return fail("expects each row reduction's result read per row");
  r.anchorFill = findFillBefore(anchor, anchor.getDpsInits()[0]);
  int64_t rows = 1;
  for (unsigned d = 0; d + 1 < rank; ++d)
    rows *= r.ranges[d];
  FailureOr<RowGeometry> geometry =
      readRowGeometry(anchor, kMark, rows, r.ranges.back());
  if (failed(geometry))
    return failure();
  r.geometry = *geometry;
  return r;
}

class RowNormBuilder : RowKernelBuilder {
public:
  explicit RowNormBuilder(RowNorm norm)
      : RowKernelBuilder(norm.anchor, norm.geometry), r(std::move(norm)) {}

  void build();

private:
  /// `combiner`'s kind applied to `a` and `b`.
  Value combine(Operation *combiner, Value lhs, Value rhs) {
    OperationState state(b.getLoc(), combiner->getName(), ValueRange{lhs, rhs},
                         TypeRange{lhs.getType()}, combiner->getAttrs());
    return b.create(state)->getResult(0);
  }
  /// `combiner`'s neutral element.
  Value neutral(Operation *combiner);
  /// The loop indices of (row, `column`): the leading ones from the row.
  SmallVector<Value> loopIndices(Value column);
  /// `op`'s body at the `vec` columns from `base`: the values of its
  /// operands (`read` gives each one), the row's results of the reductions
  /// before it; returns the yielded values, per column.
  SmallVector<SmallVector<Value>>
  evaluate(linalg::LinalgOp op, Value base, ValueRange carried);
  RowNorm r;
  /// The rows' results of the reductions built so far.
  DenseMap<Value, Value> rowResults;
  /// Operands read as stored, as [R, C] views.
  DenseMap<Value, Value> rowViews;
  /// The leading loop indices of this thread's row.
  SmallVector<Value> leading;
};

Value RowNormBuilder::neutral(Operation *combiner) {
  auto type = cast<FloatType>(combiner->getResult(0).getType());
  const llvm::fltSemantics &sem = type.getFloatSemantics();
  llvm::APFloat value =
      isa<arith::AddFOp>(combiner) ? llvm::APFloat::getZero(sem)
      : isa<arith::MulFOp>(combiner)
          ? llvm::APFloat::getOne(sem)
          : llvm::APFloat::getInf(
                sem, /*Negative=*/isa<arith::MaximumFOp, arith::MaxNumFOp>(
                    combiner));
  return b.create<arith::ConstantOp>(type, b.getFloatAttr(type, value));
}

SmallVector<Value> RowNormBuilder::loopIndices(Value column) {
  SmallVector<Value> indices(leading);
  indices.push_back(column);
  return indices;
}

SmallVector<SmallVector<Value>>
RowNormBuilder::evaluate(linalg::LinalgOp op, Value base, ValueRange carried) {
  unsigned rank = r.ranges.size();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  AffineMap rowMap = identity.getMajorSubMap(rank - 1);
  Block *body = op.getBlock();
  // Operands read as stored come as one vector per step.
  SmallVector<Value> vectors(op->getNumOperands());
  for (OpOperand *operand : op.getDpsInputOperands())
    if (op.getMatchingIndexingMap(operand) == identity)
      vectors[operand->getOperandNumber()] = b.create<vector::LoadOp>(
          VectorType::get({g.vec}, b.getF32Type()),
          rowViews.lookup(operand->get()), ValueRange{row, base});
  SmallVector<SmallVector<Value>> results;
  for (int64_t e = 0; e < g.vec; ++e) {
    Value column = e ? Value(b.create<arith::AddIOp>(base, index(e))) : base;
    SmallVector<Value> indices;
    IRMapping mapping;
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = body->getArgument(operand.getOperandNumber());
      if (op.isDpsInit(&operand)) {
        // The carried partial result (a reduction) or the init's value.
        if (!carried.empty())
          mapping.map(arg, carried[0]);
        else if (!arg.use_empty())
          mapping.map(arg, r.anchorFill
                               ? r.anchorFill.getInputs()[0]
                               : Value(b.create<memref::LoadOp>(
                                     rowViews.lookup(operand.get()),
                                     ValueRange{row, column})));
        continue;
      }
      if (arg.use_empty())
        continue;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (Value v = vectors[operand.getOperandNumber()]) {
        mapping.map(arg, b.create<vector::ExtractOp>(v, e));
      } else if (map == rowMap && rowResults.count(operand.get())) {
        mapping.map(arg, rowResults.lookup(operand.get()));
      } else {
        if (indices.empty())
          indices = loopIndices(column);
        SmallVector<Value> at;
        for (AffineExpr expr : map.getResults())
          at.push_back(indices[cast<AffineDimExpr>(expr).getPosition()]);
        mapping.map(arg, b.create<memref::LoadOp>(operand.get(), at));
      }
    }
    for (Operation &o : body->without_terminator()) {
      if (auto position = dyn_cast<linalg::IndexOp>(o)) {
        if (indices.empty())
          indices = loopIndices(column);
        mapping.map(position.getResult(), indices[position.getDim()]);
        continue;
      }
      b.clone(o, mapping);
    }
    SmallVector<Value> yielded;
    for (Value v : body->getTerminator()->getOperands())
      yielded.push_back(mapping.lookupOrDefault(v));
    results.push_back(std::move(yielded));
    if (!carried.empty())
      carried = results.back(); // the next column continues the partial
  }
  return results;
}

void RowNormBuilder::build() {
  beginLaunch();
  unsigned rank = r.ranges.size();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  // Views made inside the launch, so that outlining passes the memrefs.
  for (linalg::LinalgOp op : getOps(r))
    for (OpOperand &operand : op->getOpOperands())
      if (op.getMatchingIndexingMap(&operand) == identity &&
          !rowViews.count(operand.get()))
        rowViews[operand.get()] = asRows(operand.get());
  // The leading loop indices of the row (a row past the last one reads the
  // last row's, never stores).
  Value clamped = rowInside ? Value(b.create<arith::MinUIOp>(
                                  row, index(g.rows - 1)))
                            : row;
  for (int64_t d = rank - 2; d >= 0; --d) {
    leading.insert(leading.begin(),
                   d ? Value(b.create<arith::RemUIOp>(clamped,
                                                      index(r.ranges[d])))
                     : clamped);
    if (d)
      clamped = b.create<arith::DivUIOp>(clamped, index(r.ranges[d]));
  }

  for (RowReduction &reduction : r.reductions) {
    Operation *combiner = reduction.combiner;
    SmallVector<Value> partial = forEachVector(
        {neutral(combiner)}, [&](Value column, ValueRange carried) {
          return evaluate(reduction.op, column, carried).back();
        });
    SmallVector<Value> combined =
        combineRow(partial, [&](ValueRange a, ValueRange other) {
          return SmallVector<Value>{combine(combiner, a[0], other[0])};
        });
    rowResults[reduction.op.getDpsInits()[0]] =
        combine(combiner, reduction.fill.getInputs()[0], combined[0]);
  }

  Value output = rowViews.lookup(r.anchor.getDpsInits()[0]);
  forEachVector({}, [&](Value column, ValueRange) {
    SmallVector<Value> elements;
    for (SmallVector<Value> &yielded : evaluate(r.anchor, column, {}))
      elements.push_back(yielded[0]);
    Value v = b.create<vector::FromElementsOp>(
        VectorType::get({g.vec}, b.getF32Type()), elements);
    b.create<vector::StoreOp>(v, output, ValueRange{row, column});
    return SmallVector<Value>{};
  });

  SmallVector<Operation *> erased = {r.anchor};
  if (r.anchorFill)
    erased.push_back(r.anchorFill);
  for (RowReduction &reduction : llvm::reverse(r.reductions)) {
    erased.push_back(reduction.op);
    erased.push_back(reduction.fill);
  }
  for (Operation *op : erased)
    op->erase();
}

struct GpuRowNormPass final
    : ke::impl::GpuRowNormPassBase<GpuRowNormPass> {
  void runOnOperation() override {
    for (linalg::LinalgOp op : collectMarked<linalg::LinalgOp>(getOperation(), kMark)) {
      FailureOr<RowNorm> r = analyze(op);
      if (failed(r))
        return signalPassFailure();
      RowNormBuilder(std::move(*r)).build();
    }
  }
};

} // namespace

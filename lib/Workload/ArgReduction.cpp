//===- ArgReduction.cpp - argmax / argmin over rows -----------------------===//
//
// See ke/Workload/ArgReduction.h: the pattern, matched op by op on the
// body (block arguments: in, best, index).
//
//===----------------------------------------------------------------------===//

#include "ke/Workload/ArgReduction.h"

using namespace mlir;
using namespace ke;

namespace {

/// `cmp` as `predicate(x, b)` with x the input and b the best value (the
/// operands may come either way round), for ogt and olt only.
std::optional<arith::CmpFPredicate> comparison(arith::CmpFOp cmp, Value in,
                                               Value best) {
  arith::CmpFPredicate p = cmp.getPredicate();
  if (p != arith::CmpFPredicate::OGT && p != arith::CmpFPredicate::OLT)
    return std::nullopt;
  if (cmp.getLhs() == in && cmp.getRhs() == best)
    return p;
  if (cmp.getLhs() == best && cmp.getRhs() == in)
    return p == arith::CmpFPredicate::OGT ? arith::CmpFPredicate::OLT
                                          : arith::CmpFPredicate::OGT;
  return std::nullopt;
}

/// Whether `v` is the position along `dim`: linalg.index, possibly cast.
bool isPosition(Value v, unsigned dim) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  auto index = v.getDefiningOp<linalg::IndexOp>();
  return index && index.getDim() == dim;
}

/// Whether `v` keeps the better of `in` and `best` under `p`.
bool isBestValue(Value v, Value cond, Value in, Value best,
                 arith::CmpFPredicate p) {
  Operation *op = v.getDefiningOp();
  if (auto select = dyn_cast_or_null<arith::SelectOp>(op))
    return select.getCondition() == cond && select.getTrueValue() == in &&
           select.getFalseValue() == best;
  if (!op || op->getNumOperands() != 2 ||
      !llvm::is_contained(op->getOperands(), in) ||
      !llvm::is_contained(op->getOperands(), best))
    return false;
  if (p == arith::CmpFPredicate::OGT)
    return isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
  return isa<arith::MinimumFOp, arith::MinNumFOp>(op);
}

} // namespace

std::optional<ArgReduction> ke::matchArgReduction(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 2 ||
      op.getNumReductionLoops() != 1 || op.getNumLoops() < 1 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return std::nullopt;
  // The input read in loop order, each init the rows (the last loop
  // dropped).
  unsigned loops = op.getNumLoops();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!maps[0].isIdentity())
    return std::nullopt;
  SmallVector<AffineExpr> rowExprs;
  for (unsigned d = 0; d + 1 < loops; ++d)
    rowExprs.push_back(getAffineDimExpr(d, op.getContext()));
  AffineMap rows = AffineMap::get(loops, 0, rowExprs, op.getContext());
  if (maps[1] != rows || maps[2] != rows)
    return std::nullopt;

  Block *body = op.getBlock();
  Value in = body->getArgument(0), best = body->getArgument(1),
        index = body->getArgument(2);
  if (!isa<FloatType>(in.getType()) || in.getType() != best.getType() ||
      !(isa<IntegerType>(index.getType()) || index.getType().isIndex()))
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto indexSelect = yield.getOperand(1).getDefiningOp<arith::SelectOp>();
  if (!indexSelect || indexSelect.getFalseValue() != index ||
      !isPosition(indexSelect.getTrueValue(), loops - 1))
    return std::nullopt;
  auto cmp = indexSelect.getCondition().getDefiningOp<arith::CmpFOp>();
  if (!cmp)
    return std::nullopt;
  std::optional<arith::CmpFPredicate> p = comparison(cmp, in, best);
  if (!p)
    return std::nullopt;
  if (!isBestValue(yield.getOperand(0), cmp, in, best, *p))
    return std::nullopt;
  // Nothing else in the body: what the kernel does is all it does.
  for (Operation &o : body->without_terminator()) {
    if (!isa<arith::CmpFOp, arith::SelectOp, arith::IndexCastOp,
             linalg::IndexOp, arith::MaximumFOp, arith::MaxNumFOp,
             arith::MinimumFOp, arith::MinNumFOp>(o))
      return std::nullopt;
    if (auto position = dyn_cast<linalg::IndexOp>(o);
        position && position.getDim() != loops - 1)
      return std::nullopt;
  }
  return ArgReduction{*p, in.getType(), index.getType()};
}

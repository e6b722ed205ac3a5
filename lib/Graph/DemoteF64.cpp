//===- DemoteF64.cpp - f64 computed from f32 data, in f32 -----------------===//
//
// ke-demote-f64 (ke/Graph/Passes.td). torch-mlir computes the variance of
// norms in f64 (extf of the f32 input, f64 reductions and elementwise ops,
// truncf back). PyTorch's own kernels accumulate in f32 for f32 inputs, so
// the f64 only costs bandwidth and, on GPUs, arithmetic rate. The pass
// finds the f64 tensors derived from f32 data (generics and fills whose f64
// operands are all such tensors, empties or constants), checks that every
// reader is a generic whose body it can retype, and retypes the whole set:
// results, block arguments, body ops and constants become f32, extf to and
// truncf from f32 disappear; reshapes of such tensors are retyped with
// them. When any f64 value of a function escapes (a return, an op it does
// not know), the function keeps its f64.
//
//===----------------------------------------------------------------------===//

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-demote-f64"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_DEMOTEF64PASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

bool isF64(Type type) { return getElementTypeOrSelf(type).isF64(); }

bool isF64Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF64();
}

/// Whether every op in `generic`'s body can be retyped from f64 to f32:
/// arith and math ops (float ops are type-generic; extf and truncf to or
/// from f64 become identities or narrower casts), the linalg terminator and
/// index ops; f64 values from outside the body must be constants.
bool hasRetypableBody(linalg::GenericOp generic) {
  WalkResult result = generic.getRegion().walk([&](Operation *op) {
    StringRef dialect = op->getDialect()->getNamespace();
    if (dialect != "arith" && dialect != "math" &&
        !isa<linalg::YieldOp, linalg::IndexOp>(op))
      return WalkResult::interrupt();
    for (Value operand : op->getOperands())
      if (isF64(operand.getType()) &&
          !generic.getRegion().isAncestor(operand.getParentRegion()) &&
          !matchPattern(operand, m_Constant()))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// An f64 tensor operand that may become f32: already in `derived`, or a
/// tensor.empty (an init whose contents are not read).
bool isDemotableOperand(Value value, const DenseSet<Value> &derived) {
  return derived.contains(value) || value.getDefiningOp<tensor::EmptyOp>();
}

/// The ops of `function` to retype, or failure when an f64 value derived
/// from f32 data reaches something that cannot be retyped.
FailureOr<SmallVector<Operation *>>
findDemotable(FunctionOpInterface function) {
  llvm::SetVector<Operation *> demoted;
  DenseSet<Value> derived;
  bool grew = true;
  while (grew) {
    grew = false;
    function.walk([&](Operation *op) {
      if (demoted.contains(op) ||
          !isa<linalg::GenericOp, linalg::FillOp, tensor::CollapseShapeOp,
               tensor::ExpandShapeOp>(op) ||
          llvm::none_of(op->getResultTypes(), isF64Tensor))
        return;
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op)) {
        // A reshape of a derived tensor (a reduction's rows collapsed by
        // ke-fold-reduction-unit-dims or ke-collapse-reduction-dims) is
        // retyped with it.
        if (!derived.contains(op->getOperand(0)))
          return;
      } else if (auto fill = dyn_cast<linalg::FillOp>(op)) {
        if (!matchPattern(fill.value(), m_Constant()) ||
            !isDemotableOperand(fill.output(), derived))
          return;
      } else {
        auto generic = cast<linalg::GenericOp>(op);
        if (!generic.hasPureTensorSemantics() || !hasRetypableBody(generic))
          return;
        // Derived from f32 data: every f64 operand is (an f32 input read
        // through an extf in the body is what starts a chain).
        for (Value operand : op->getOperands())
          if (isF64Tensor(operand.getType()) &&
              !isDemotableOperand(operand, derived))
            return;
      }
      demoted.insert(op);
      for (Value result : op->getResults())
        derived.insert(result);
      grew = true;
    });
  }
  // Readers of the retyped values: generics get their bodies retyped too;
  // anything else keeps the function in f64.
  llvm::SetVector<Operation *> retyped(demoted.begin(), demoted.end());
  for (Value value : derived) {
    for (Operation *user : value.getUsers()) {
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (!generic || !hasRetypableBody(generic) ||
          llvm::any_of(generic->getResultTypes(), isF64Tensor)) {
        if (retyped.contains(user))
          continue;
        LLVM_DEBUG(llvm::dbgs()
                   << "[" DEBUG_TYPE "] " << user->getName() << " at "
                   << user->getLoc() << " reads f64; keeping f64\n");
        return failure();
      }
      retyped.insert(user);
    }
  }
  return SmallVector<Operation *>(retyped.begin(), retyped.end());
}

/// `attr` as an f32 constant.
Value getF32Constant(OpBuilder &builder, Location loc, Attribute attr) {
  double value = cast<FloatAttr>(attr).getValueAsDouble();
  return arith::ConstantOp::create(builder, loc,
                                   builder.getF32FloatAttr(value));
}

/// Retypes the body of `generic` from f64 to f32.
void retypeBody(linalg::GenericOp generic,
                llvm::SetVector<Operation *> &replaced) {
  Block *body = generic.getBody();
  OpBuilder builder = OpBuilder::atBlockBegin(body);
  Type f32 = builder.getF32Type();
  for (BlockArgument arg : body->getArguments())
    if (arg.getType().isF64())
      arg.setType(f32);
  SmallVector<Operation *> ops;
  for (Operation &op : body->getOperations())
    ops.push_back(&op);
  for (Operation *op : ops) {
    // Constants from outside, as f32 inside.
    for (OpOperand &operand : op->getOpOperands()) {
      Attribute attr;
      if (operand.get().getType().isF64() &&
          operand.get().getParentBlock() != body &&
          matchPattern(operand.get(), m_Constant(&attr))) {
        builder.setInsertionPoint(op);
        replaced.insert(operand.get().getDefiningOp());
        operand.set(getF32Constant(builder, op->getLoc(), attr));
      }
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(op);
        constant && constant.getType().isF64()) {
      builder.setInsertionPoint(op);
      constant.replaceAllUsesWith(
          getF32Constant(builder, op->getLoc(), constant.getValue()));
      constant.erase();
      continue;
    }
    for (OpResult result : op->getResults())
      if (result.getType().isF64())
        result.setType(f32);
    // extf f32 -> f64 and truncf f64 -> f32 are now identities.
    if (isa<arith::ExtFOp, arith::TruncFOp>(op) &&
        op->getOperand(0).getType() == op->getResult(0).getType()) {
      op->getResult(0).replaceAllUsesWith(op->getOperand(0));
      op->erase();
    }
  }
}

/// Retypes `op` (a fill, generic or reshape) and its f64 empties to f32;
/// the empties
/// and constants it no longer uses go into `replaced`.
void retype(Operation *op, llvm::SetVector<Operation *> &replaced) {
  OpBuilder builder(op);
  Type f32 = builder.getF32Type();
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    if (auto empty = value.getDefiningOp<tensor::EmptyOp>();
        empty && isF64Tensor(value.getType())) {
      auto type = cast<RankedTensorType>(value.getType()).clone(f32);
      replaced.insert(empty);
      operand.set(tensor::EmptyOp::create(builder, empty.getLoc(),
                                          type.getShape(), f32));
    }
  }
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    Attribute attr;
    if (matchPattern(fill.value(), m_Constant(&attr)) &&
        fill.value().getType().isF64()) {
      replaced.insert(fill.value().getDefiningOp());
      fill->setOperand(0, getF32Constant(builder, fill.getLoc(), attr));
    }
    // The fill's body (a yield of its scalar argument) is retyped below.
    Block *body = &fill->getRegion(0).front();
    for (BlockArgument arg : body->getArguments())
      if (arg.getType().isF64())
        arg.setType(f32);
  }
  for (OpResult result : op->getResults())
    if (isF64Tensor(result.getType()))
      result.setType(cast<RankedTensorType>(result.getType()).clone(f32));
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    retypeBody(generic, replaced);
}

struct DemoteF64Pass : ke::impl::DemoteF64PassBase<DemoteF64Pass> {
  void runOnOperation() override {
    getOperation()->walk([](FunctionOpInterface function) {
      FailureOr<SmallVector<Operation *>> ops = findDemotable(function);
      if (failed(ops) || ops->empty())
        return;
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] retyping " << ops->size()
                              << " ops of @" << function.getName() << "\n");
      llvm::SetVector<Operation *> replaced;
      for (Operation *op : *ops)
        retype(op, replaced);
      for (Operation *op : replaced)
        if (op->use_empty())
          op->erase();
    });
  }
};

} // namespace

//===- ComputeNarrowFloatsInF32.cpp - bf16/f16 op bodies in f32 -----------===//
//
// ke-compute-narrow-floats-in-f32 (ke/Graph/Passes.td). Measured on
// KernelBench's Conv2d_Add_Scale_Sigmoid_GroupNorm in bf16 (sizes / 16, on
// this CPU, against the model in f64): with torch-mlir's bf16 sigmoid (four
// roundings) ke had 3.2 times as many elements outside the 1e-2 tolerance
// as eager PyTorch, whose sigmoid rounds once; docs/workloads.md.
//
//===----------------------------------------------------------------------===//

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-compute-narrow-floats-in-f32"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_COMPUTENARROWFLOATSINF32PASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

bool isNarrowFloat(Type type) {
  auto f = dyn_cast<FloatType>(type);
  return f && f.getWidth() < 32;
}

/// Whether `op` is arithmetic this pass moves to f32: an arith float op or
/// a math op whose float operands and results are all of one narrow type.
bool isNarrowArithmetic(Operation &op) {
  if (op.getNumRegions() != 0)
    return false;
  bool isMath =
      op.getDialect() && op.getDialect()->getNamespace() == "math";
  if (!isMath &&
      !isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
           arith::RemFOp, arith::NegFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp, arith::CmpFOp,
           arith::SelectOp>(op))
    return false;
  Type narrow;
  for (Type type : llvm::concat<Type>(llvm::to_vector(op.getOperandTypes()),
                                      llvm::to_vector(op.getResultTypes()))) {
    if (!isa<FloatType>(type))
      continue;
    if (!isNarrowFloat(type) || (narrow && type != narrow))
      return false;
    narrow = type;
  }
  return bool(narrow);
}

/// Rewrites the body of `generic`; returns the number of ops widened.
unsigned widenBody(linalg::GenericOp generic) {
  Block &body = generic.getRegion().front();
  SmallVector<Operation *> narrowOps;
  for (Operation &op : body.without_terminator())
    if (isNarrowArithmetic(op))
      narrowOps.push_back(&op);
  if (narrowOps.empty())
    return 0;
  OpBuilder builder(generic.getContext());
  Type f32 = builder.getF32Type();
  // The f32 value of each narrow value computed or read so far.
  DenseMap<Value, Value> wide;
  auto getWide = [&](Value value) -> Value {
    if (!isNarrowFloat(value.getType()))
      return value;
    if (Value known = wide.lookup(value))
      return known;
    // Inside the body, also for a constant captured from above: a kernel
    // built from the generic takes buffers only, and constants it clones.
    OpBuilder::InsertionGuard guard(builder);
    Operation *def = value.getDefiningOp();
    if (def && def->getBlock() == &body)
      builder.setInsertionPointAfter(def);
    else
      builder.setInsertionPointToStart(&body);
    Value extended =
        arith::ExtFOp::create(builder, value.getLoc(), f32, value);
    wide[value] = extended;
    return extended;
  };
  for (Operation *op : narrowOps) {
    builder.setInsertionPoint(op);
    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(getWide(operand));
    SmallVector<Type> types;
    for (Type type : op->getResultTypes())
      types.push_back(isNarrowFloat(type) ? f32 : type);
    OperationState state(op->getLoc(), op->getName(), operands, types,
                         op->getAttrs());
    Operation *widened = builder.create(state);
    for (auto [narrow, result] :
         llvm::zip(op->getResults(), widened->getResults())) {
      if (!isNarrowFloat(narrow.getType())) {
        narrow.replaceAllUsesWith(result);
        continue;
      }
      wide[narrow] = result;
      // Users left in the narrow type (the yield, a truncf, an op not
      // widened) read the result rounded once.
      bool readNarrow = llvm::any_of(narrow.getUsers(), [&](Operation *user) {
        return !llvm::is_contained(narrowOps, user);
      });
      if (readNarrow) {
        builder.setInsertionPointAfter(widened);
        Value rounded = arith::TruncFOp::create(builder, op->getLoc(),
                                                narrow.getType(), result);
        narrow.replaceUsesWithIf(rounded, [&](OpOperand &use) {
          return !llvm::is_contained(narrowOps, use.getOwner());
        });
      }
    }
  }
  // Narrow ops are now read only by other narrow ops, which have their
  // widened copies: erase them, last first.
  for (Operation *op : llvm::reverse(narrowOps)) {
    op->dropAllUses();
    op->erase();
  }
  return narrowOps.size();
}

struct ComputeNarrowFloatsInF32Pass
    : ke::impl::ComputeNarrowFloatsInF32PassBase<ComputeNarrowFloatsInF32Pass> {
  void runOnOperation() override {
    getOperation()->walk([](linalg::GenericOp generic) {
      if (!generic.hasPureTensorSemantics())
        return;
      unsigned widened = widenBody(generic);
      (void)widened;
      LLVM_DEBUG(if (widened) llvm::dbgs()
                 << "[" DEBUG_TYPE "] " << widened << " ops in f32 at "
                 << generic.getLoc() << "\n");
    });
  }
};

} // namespace

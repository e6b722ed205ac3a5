//===- FreshUnreadInits.cpp - tensor.empty for inits nobody reads ---------===//
//
// ke-fresh-unread-inits (ke/Codegen/Passes.td): of the generics that write
// into one destination, each but the last that writes every element
// without reading it gets a tensor.empty in its place, so that tiling and
// fusion do not tie its result to the last one's destination (a copy per
// block after bufferization).
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_FRESHUNREADINITSPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// Whether `op` computes its result for `init` without the init's values:
/// all its loops parallel, the init written through a permutation (every
/// element), its block argument unread.
bool overwritesInit(linalg::GenericOp op, OpOperand &init) {
  return op.hasPureTensorSemantics() &&
         op.getNumParallelLoops() == op.getNumLoops() &&
         !op.payloadUsesValueFromOperand(&init) &&
         op.getMatchingIndexingMap(&init).isPermutation();
}

struct FreshUnreadInitsPass final
    : ke::impl::FreshUnreadInitsPassBase<FreshUnreadInitsPass> {
  void runOnOperation() override {
    // The inits that several generics of one block write into, each with
    // its writers in block order.
    llvm::MapVector<Value, SmallVector<OpOperand *>> writers;
    getOperation()->walk([&](linalg::GenericOp op) {
      for (OpOperand &init : op.getDpsInitsMutable())
        writers[init.get()].push_back(&init);
    });
    for (auto &[value, inits] : writers) {
      // The last writer keeps the destination (the result the function
      // returns is written there); the earlier ones that do not read it
      // get their own.
      llvm::sort(inits, [](OpOperand *a, OpOperand *b) {
        return a->getOwner()->isBeforeInBlock(b->getOwner());
      });
      for (OpOperand *init : ArrayRef(inits).drop_back()) {
        auto op = cast<linalg::GenericOp>(init->getOwner());
        if (op->getBlock() != inits.back()->getOwner()->getBlock() ||
            !overwritesInit(op, *init))
          continue;
        OpBuilder builder(op);
        auto type = cast<RankedTensorType>(value.getType());
        init->set(tensor::EmptyOp::create(
            builder, op.getLoc(),
            tensor::getMixedSizes(builder, op.getLoc(), value),
            type.getElementType(), type.getEncoding()));
      }
    }
  }
};

} // namespace

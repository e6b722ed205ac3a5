//===- NormalizeEmpties.cpp - One tensor.empty per destination, first -----===//
//
// ke-normalize-empties (ke/Graph/Passes.td). Ops that share a tensor.empty
// as their destination share a buffer once bufferized, so an op writing it
// while another's result still lives there costs a copy, and a kernel group
// gets one buffer for two of its results; and an empty created after an
// anchor keeps the consumer that writes it out of the anchor's kernel
// group. A tensor.empty is only a shape: cloning it per use and creating it
// earlier change no value.
//
//===----------------------------------------------------------------------===//

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-normalize-empties"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_NORMALIZEEMPTIESPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

struct NormalizeEmptiesPass
    : ke::impl::NormalizeEmptiesPassBase<NormalizeEmptiesPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> empties;
    getOperation()->walk(
        [&](tensor::EmptyOp empty) { empties.push_back(empty); });
    for (tensor::EmptyOp empty : empties) {
      // Static shapes have no operands: the empty can stand first in its
      // block, ahead of every op a kernel group may need it before.
      Block *block = empty->getBlock();
      if (empty->getNumOperands() == 0 && &block->front() != empty)
        empty->moveBefore(&block->front());
      if (empty->hasOneUse() || empty->use_empty())
        continue;
      // Every use but the first gets a clone beside the original, which
      // dominates all its uses (so the clone does too).
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : empty->getUses())
        uses.push_back(&use);
      llvm::sort(uses, [](OpOperand *a, OpOperand *b) {
        Operation *x = a->getOwner(), *y = b->getOwner();
        if (x != y && x->getBlock() == y->getBlock())
          return x->isBeforeInBlock(y);
        return a->getOperandNumber() < b->getOperandNumber();
      });
      OpBuilder builder(empty);
      builder.setInsertionPointAfter(empty);
      for (OpOperand *use : llvm::drop_begin(uses))
        use->set(builder.clone(*empty)->getResult(0));
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << uses.size()
                              << " uses of " << empty << "\n");
    }
  }
};

} // namespace

//===- NormalizeEmpties.cpp - One tensor.empty per destination, first -----===//
//
// ke-normalize-empties (ke/Graph/Passes.td). Ops that share a tensor.empty
// as their destination share a buffer once bufferized, so an op writing it
// while another's result still lives there costs a copy, and a kernel group
// gets one buffer for two of its results; and an empty created after an
// anchor keeps the consumer that writes it out of the anchor's kernel
// group. A tensor.empty is only a shape: cloning it per use and creating it
// earlier change no value. Likewise a linalg.fill that several ops read,
// one of them accumulating into it, is cloned for each accumulating use
// (the clones' empties then split like any other).
//
//===----------------------------------------------------------------------===//

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
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
  /// A fill read by several ops, one of which accumulates into it (two row
  /// sums starting from one zero fill, as torch-mlir's CSE leaves them):
  /// each accumulating use gets a fill of its own. Shared, the kernels
  /// would accumulate into one buffer, the second overwriting the first's
  /// result while it is still to be read (TripletMarginLoss on a GPU).
  void cloneSharedInitFills() {
    SmallVector<linalg::FillOp> fills;
    getOperation()->walk([&](linalg::FillOp fill) {
      if (fill->getNumResults() == 1 && !fill->getResult(0).hasOneUse())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : fill->getResult(0).getUses())
        if (auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
            dps && dps.isDpsInit(&use))
          inits.push_back(&use);
      // The last use keeps the original when nothing else reads it.
      bool onlyInits =
          inits.size() ==
          static_cast<size_t>(std::distance(fill->getResult(0).use_begin(),
                                            fill->getResult(0).use_end()));
      if (onlyInits)
        inits.pop_back();
      OpBuilder builder(fill);
      builder.setInsertionPointAfter(fill);
      for (OpOperand *use : inits)
        use->set(builder.clone(*fill)->getResult(0));
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << inits.size()
                              << " accumulating uses of " << fill
                              << " get fills of their own\n");
    }
  }

  void runOnOperation() override {
    cloneSharedInitFills();
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

//===- SplitSharedEmpties.cpp - One tensor.empty per destination ----------===//
//
// ke-split-shared-empties (ke/Graph/Passes.td). Ops that share a
// tensor.empty as their destination share a buffer once bufferized, so an
// op writing it while another's result still lives there costs a copy, and
// a kernel group gets one buffer for two of its results. A tensor.empty is
// only a shape: cloning it per use changes no value.
//
//===----------------------------------------------------------------------===//

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-split-shared-empties"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_SPLITSHAREDEMPTIESPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

struct SplitSharedEmptiesPass
    : ke::impl::SplitSharedEmptiesPassBase<SplitSharedEmptiesPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> shared;
    getOperation()->walk([&](tensor::EmptyOp empty) {
      if (!empty->hasOneUse() && !empty->use_empty())
        shared.push_back(empty);
    });
    for (tensor::EmptyOp empty : shared) {
      // Every use but the first gets a clone placed beside the original,
      // which dominates all its uses: the clone does too, and stays ahead
      // of the ops that kernel grouping requires to precede an anchor.
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : empty->getUses())
        uses.push_back(&use);
      llvm::sort(uses, [](OpOperand *a, OpOperand *b) {
        Operation *x = a->getOwner(), *y = b->getOwner();
        return x->getBlock() == y->getBlock() ? x->isBeforeInBlock(y)
                                              : x < y;
      });
      OpBuilder builder(empty);
      builder.setInsertionPointAfter(empty);
      for (OpOperand *use : llvm::drop_begin(uses)) {
        Operation *clone = builder.clone(*empty);
        use->set(clone->getResult(0));
      }
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << uses.size()
                              << " uses of " << empty << "\n");
    }
  }
};

} // namespace

//===- FuseElementwiseChains.cpp - One elementwise consumer per anchor ----===//
//
// ke-fuse-elementwise-chains (ke/Graph/Passes.td). ke's kernel groups take
// one elementwise consumer into an anchor's kernel (getKernelGroup in
// ke/Workload/Kernel.h); torch-mlir's bias, activation and scaling are
// separate generics, so all but the first would be kernels of their own.
// MLIR's elementwise fusion merges them; the control function keeps it
// to what ke's sketch rules schedule: elementwise into elementwise, one
// result, no duplicated computation (a producer with other users stays,
// else the fused op would recompute it or get a second result).
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-fuse-elementwise-chains"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_FUSEELEMENTWISECHAINSPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

/// An elementwise generic on tensors with one result.
bool isSingleResultElementwise(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && generic.hasPureTensorSemantics() &&
         generic->getNumResults() == 1 &&
         generic.getNumParallelLoops() == generic.getNumLoops();
}

/// Fuses the producer of `operand` into its owner when both are
/// single-result elementwise generics and the owner is the producer's only
/// user.
bool shouldFuse(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  Operation *consumer = operand->getOwner();
  bool fuse = isSingleResultElementwise(producer) &&
              isSingleResultElementwise(consumer) &&
              producer->getResult(0).hasOneUse();
  LLVM_DEBUG(if (fuse) llvm::dbgs()
             << "[" DEBUG_TYPE "] fusing the producer at " << producer->getLoc()
             << " into the consumer at " << consumer->getLoc() << "\n");
  return fuse;
}

struct FuseElementwiseChainsPass
    : ke::impl::FuseElementwiseChainsPassBase<FuseElementwiseChainsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace

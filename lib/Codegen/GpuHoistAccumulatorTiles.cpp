//===- GpuHoistAccumulatorTiles.cpp - Accumulators in registers -----------===//
//
// ke-gpu-hoist-accumulator-tiles (ke/Codegen/Passes.td), a step of the GPU lowering.
//
//===----------------------------------------------------------------------===//

#include "GpuMemory.h"

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-gpu-hoist-accumulator-tiles"

using namespace mlir;
using ke::getMemrefRoot;
using ke::isDistinctBuffer;

namespace ke {
#define GEN_PASS_DEF_GPUHOISTACCUMULATORTILESPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// True when `op` is a vector transfer of `read`'s memref that provably
/// touches none of `read`'s elements: the accumulator of a warp's
/// tensor-core tile is many such tiles of one buffer (16x8 each), at
/// indices that differ by constants (upstream's value bounds prove it).
bool isDisjointTileOfSameBuffer(Operation *op, vector::TransferReadOp read) {
  auto other = dyn_cast<VectorTransferOpInterface>(op);
  if (!other || other.getBase() != read.getBase())
    return false;
  return vector::isDisjointTransferSet(
      cast<VectorTransferOpInterface>(read.getOperation()), other,
      /*testDynamicValueUsingBounds=*/true);
}

/// True when nothing in `loop` other than `read` and `write` may touch the
/// buffer `root`'s elements that they move (barriers aside: they order,
/// they do not access; other tiles of the same buffer proved disjoint
/// aside).
bool onlyAccessesOfRoot(scf::ForOp loop, Value root,
                        vector::TransferReadOp read, Operation *write) {
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (op == read || op == write || isa<gpu::BarrierOp>(op) ||
        isMemoryEffectFree(op) ||
        op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        isDisjointTileOfSameBuffer(op, read))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      Value value = effect.getValue();
      if (!value)
        return WalkResult::interrupt();
      Value other = getMemrefRoot(value);
      if (other == root || !isDistinctBuffer(other))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// The shape of `type` without its leading unit dimensions.
ArrayRef<int64_t> dropLeadingUnits(VectorType type) {
  ArrayRef<int64_t> shape = type.getShape();
  while (!shape.empty() && shape.front() == 1)
    shape = shape.drop_front();
  return shape;
}

/// True when `read` and `write` move the same elements: equal, or (the 1-D
/// convolutions the vectorizer makes of a decomposed 2-D one read their
/// accumulator rank-reduced) minor-identity accesses whose vector shapes
/// differ only in leading unit dimensions.
bool sameTile(vector::TransferReadOp read, vector::TransferWriteOp write) {
  if (write.getVectorType() == read.getVectorType())
    return write.getPermutationMap() == read.getPermutationMap();
  return read.getPermutationMap().isMinorIdentity() &&
         write.getPermutationMap().isMinorIdentity() &&
         read.getVectorType().getElementType() ==
             write.getVectorType().getElementType() &&
         dropLeadingUnits(read.getVectorType()) ==
             dropLeadingUnits(write.getVectorType()) &&
         read.getInBoundsValues() == SmallVector<bool>(
                                         read.getVectorType().getRank(), true) &&
         write.getInBoundsValues() ==
             SmallVector<bool>(write.getVectorType().getRank(), true);
}

/// Keeps a thread's accumulator tile in registers across a loop: a
/// vector.transfer_read at the top of an scf.for's body and a
/// vector.transfer_write of the same tile (same memref value and indices,
/// all defined outside the loop) move out of the loop, the tile becoming
/// an iter_arg. The GPU sketches leave this pattern in the shared-memory
/// stage loop of a contraction (the thread forall sits inside it), where
/// every stage would otherwise read and write the output tile in global
/// memory. Only done when nothing else in the loop touches the tile's
/// buffer and the loop runs at least once; upstream's
/// hoistRedundantVectorTransfers refuses tiles that are subviews.
void hoistAccumulatorTiles(ModuleOp module) {
  SmallVector<scf::ForOp> loops;
  module.walk([&](scf::ForOp loop) {
    if (loop->getParentOfType<gpu::LaunchOp>())
      loops.push_back(loop);
  });
  IRRewriter rewriter(module.getContext());
  for (scf::ForOp loop : loops) {
    moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
    std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()),
                           upper = getConstantIntValue(loop.getUpperBound());
    if (!lower || !upper || *lower >= *upper)
      continue;
    bool changed = true;
    while (changed) {
      changed = false;
      for (Operation &op : *loop.getBody()) {
        auto read = dyn_cast<vector::TransferReadOp>(&op);
        if (!read || read.getMask() || !isa<MemRefType>(read.getShapedType()))
          continue;
        auto invariant = [&](Value v) {
          return !loop->isAncestor(v.getParentBlock()->getParentOp());
        };
        if (!llvm::all_of(read->getOperands(), invariant))
          continue;
        vector::TransferWriteOp write;
        for (Operation &later : llvm::make_range(
                 std::next(Block::iterator(read)), loop.getBody()->end())) {
          auto candidate = dyn_cast<vector::TransferWriteOp>(&later);
          if (candidate && candidate.getBase() == read.getBase() &&
              candidate.getIndices() == read.getIndices() &&
              sameTile(read, candidate) && !candidate.getMask()) {
            write = candidate;
            break;
          }
        }
        if (!write)
          continue;
        Value root = getMemrefRoot(read.getBase());
        if (!isDistinctBuffer(root) ||
            !onlyAccessesOfRoot(loop, root, read, write))
          continue;
        LLVM_DEBUG(llvm::dbgs()
                   << "[" DEBUG_TYPE "] accumulator tile "
                   << read.getVectorType() << " carried by its loop\n");
        rewriter.setInsertionPoint(loop);
        Operation *hoisted = rewriter.clone(*read);
        FailureOr<LoopLikeOpInterface> grown =
            cast<LoopLikeOpInterface>(loop.getOperation())
                .replaceWithAdditionalYields(
                    rewriter, hoisted->getResult(0),
                    /*replaceInitOperandUsesInLoop=*/false,
                    [&](OpBuilder &b, Location loc, ArrayRef<BlockArgument>) {
                      Value tile = write.getVector();
                      if (tile.getType() != read.getVectorType())
                        tile = vector::ShapeCastOp::create(
                            b, loc, read.getVectorType(), tile);
                      return SmallVector<Value>{tile};
                    });
        if (failed(grown))
          break;
        loop = cast<scf::ForOp>(grown->getOperation());
        rewriter.replaceOp(read, loop.getRegionIterArgs().back());
        rewriter.setInsertionPointAfter(loop);
        write->moveAfter(loop);
        Value result = loop.getResults().back();
        if (result.getType() != write.getVectorType()) {
          rewriter.setInsertionPoint(write);
          result = vector::ShapeCastOp::create(rewriter, write.getLoc(),
                                               write.getVectorType(), result);
        }
        write.getValueToStoreMutable().assign(result);
        changed = true;
        break;
      }
    }
  }
}

struct GpuHoistAccumulatorTilesPass : ke::impl::GpuHoistAccumulatorTilesPassBase<GpuHoistAccumulatorTilesPass> {
  void runOnOperation() override {
    hoistAccumulatorTiles(getOperation());
  }
};

} // namespace

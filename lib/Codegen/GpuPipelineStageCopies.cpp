//===- GpuPipelineStageCopies.cpp - cp.async multi-stage pipelining -------===//
//
// ke-gpu-pipeline-stage-copies (ke/Codegen/Passes.td), a step of the CUDA
// lowering, after ke-gpu-vector-to-mma.
//
// A tensor-core stage loop, as ke-gpu-vector-to-mma leaves it, copies the
// A and B tiles of stage k into shared memory (16-byte loads and stores),
// waits at a barrier, multiplies them (ldmatrix, mma.sync) and waits at a
// barrier again: the tensor cores idle while the loads are in flight. Here
//   1. the shared tiles move out of the loop and the barriers that order
//      nothing are erased (the one between the two copies);
//   2. each 16-byte load-store pair becomes cp.async (global to shared
//      without registers; upstream's nvgpu::createAsyncGroups), one group
//      per stage;
//   3. the tiles get `depth` buffers (memref::multiBuffer) and the loop is
//      software-pipelined (upstream's scf pipeliner): the copies of stage
//      k + depth - 1 are issued at the top of iteration k, which then waits
//      until at most depth - 1 groups are in flight (stage k's has landed),
//      crosses the barrier and multiplies stage k. The peeled last stages
//      wait for everything.
// depth is 3, or 2 where three sets of tiles do not fit the static shared
// memory (48 KiB). The barrier at the end of each iteration keeps the
// copies into a buffer after the reads of the stage that used it before.
//
//===----------------------------------------------------------------------===//

#include "GpuMemory.h"

#include "ke/Codegen/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/NVGPU/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-gpu-pipeline-stage-copies"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_GPUPIPELINESTAGECOPIESPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// Static shared memory a block may use without the dynamic opt-in.
constexpr int64_t kStaticSharedBytes = 48 * 1024;
/// Buffers per tile when they fit.
constexpr int64_t kMaxDepth = 3;

/// Workgroup buffers an op reads and writes; false when it may touch
/// workgroup memory in a way it does not say.
bool collectSharedAccesses(Operation *op, llvm::SmallPtrSetImpl<Value> &reads,
                           llvm::SmallPtrSetImpl<Value> &writes) {
  if (isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  for (const MemoryEffects::EffectInstance &effect : instances) {
    Value value = effect.getValue();
    if (!value)
      return false;
    if (!ke::isWorkgroupMemref(value.getType()))
      continue;
    if (!value.getDefiningOp<memref::AllocOp>())
      return false;
    if (isa<MemoryEffects::Write>(effect.getEffect()))
      writes.insert(value);
    else if (isa<MemoryEffects::Read>(effect.getEffect()))
      reads.insert(value);
  }
  return true;
}

/// Erases the barriers of a stage loop's body that order no conflicting
/// shared-memory accesses: the mapping puts one after every copy, so the
/// copy of A waits for nothing before B's copy starts. A barrier stays when
/// a buffer written on one side is read or written on the other (the one
/// before the multiply, and the one after it, which orders the next
/// iteration's copies after this one's reads), or when an access cannot
/// be placed.
void eraseUnneededStageBarriers(scf::ForOp loop) {
  SmallVector<gpu::BarrierOp> barriers;
  for (Operation &op : *loop.getBody())
    if (auto barrier = dyn_cast<gpu::BarrierOp>(&op))
      barriers.push_back(barrier);
  for (gpu::BarrierOp barrier : barriers) {
    // The accesses since the previous barrier and until the next one.
    llvm::SmallPtrSet<Value, 4> readsBefore, writesBefore, readsAfter,
        writesAfter;
    bool known = true;
    for (Operation *op = barrier->getPrevNode(); op && !isa<gpu::BarrierOp>(op);
         op = op->getPrevNode())
      known &= collectSharedAccesses(op, readsBefore, writesBefore);
    Operation *op = barrier->getNextNode();
    for (; op && !isa<gpu::BarrierOp>(op) &&
           !op->hasTrait<OpTrait::IsTerminator>();
         op = op->getNextNode())
      known &= collectSharedAccesses(op, readsAfter, writesAfter);
    // The last barrier of the body also orders the next iteration's first
    // segment, which this walk does not see.
    if (!op || !isa<gpu::BarrierOp>(op))
      continue;
    auto conflict = [](auto &written, auto &other) {
      return llvm::any_of(written, [&](Value v) { return other.contains(v); });
    };
    if (!known || conflict(writesBefore, readsAfter) ||
        conflict(writesBefore, writesAfter) ||
        conflict(writesAfter, readsBefore))
      continue;
    barrier->erase();
  }
}

/// Pipelines one stage loop; fails (with a diagnostic) only where the IR
/// was changed and could not be finished.
LogicalResult pipelineStageLoop(scf::ForOp loop) {
  IRRewriter rewriter(loop.getContext());
  // The stage's shared tiles, allocated in the body, move before the loop.
  // Each iteration writes a tile whole before reading it, and the barrier
  // at the end of the body keeps the next iteration's writes after this
  // one's reads, so one buffer (one set of `depth`) serves every iteration.
  // Tiles allocated before the loop and used only in it count as well.
  SmallVector<memref::AllocOp> tiles;
  int64_t tileBytes = 0;
  loop->getParentOp()->walk([&](memref::AllocOp alloc) {
    if (alloc->getNumOperands() != 0 ||
        !ke::isWorkgroupMemref(alloc.getResult().getType()) ||
        !llvm::all_of(alloc->getUsers(), [&](Operation *user) {
          return loop->isProperAncestor(user);
        }))
      return;
    if (loop->isProperAncestor(alloc))
      alloc->moveBefore(loop);
    tiles.push_back(alloc);
    MemRefType type = alloc.getType();
    tileBytes += type.getNumElements() * type.getElementTypeBitWidth() / 8;
  });
  eraseUnneededStageBarriers(loop);
  int64_t depth =
      tileBytes ? std::min(kMaxDepth, kStaticSharedBytes / tileBytes) : 0;
  if (depth < 2) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << tileBytes
                            << " bytes of tiles: not pipelined\n");
    return success();
  }

  nvgpu::createAsyncGroups(rewriter, loop, /*bypassL1=*/true);
  bool async = false;
  SmallVector<Operation *> body = llvm::map_to_vector(
      loop.getBody()->without_terminator(), [](Operation &op) { return &op; });
  for (Operation *op : llvm::reverse(body)) {
    async |= isa<nvgpu::DeviceAsyncCopyOp>(op);
    // The loads the copies replaced, and what only they used.
    if (isOpTriviallyDead(op))
      op->erase();
  }
  if (!async) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] no copy became cp.async\n");
    return success();
  }
  for (memref::AllocOp tile : tiles)
    if (failed(memref::multiBuffer(rewriter, tile, depth,
                                   /*skipOverrideAnalysis=*/true)))
      return loop.emitError("the stage's shared tiles could not be "
                            "multi-buffered");

  // Stage 0: the copies, their groups and what computes their addresses;
  // the last stage: the rest (wait, barrier, multiply, barrier).
  llvm::SetVector<Operation *> copies;
  for (Operation &op : *loop.getBody()) {
    if (!isa<nvgpu::DeviceAsyncCopyOp, nvgpu::DeviceAsyncCreateGroupOp>(op))
      continue;
    BackwardSliceOptions options;
    options.inclusive = true;
    options.filter = [&](Operation *o) {
      return o->getParentOp() == loop.getOperation();
    };
    (void)getBackwardSlice(&op, &copies, options);
  }
  unsigned last = depth - 1;
  scf::PipeliningOption options;
  options.getScheduleFn =
      [&](scf::ForOp forOp,
          std::vector<std::pair<Operation *, unsigned>> &schedule) {
        for (Operation &op : forOp.getBody()->without_terminator())
          if (copies.contains(&op))
            schedule.emplace_back(&op, 0);
        for (Operation &op : forOp.getBody()->without_terminator())
          if (!copies.contains(&op))
            schedule.emplace_back(&op, last);
      };
  // In the loop, stage k's group is the oldest of depth in flight once
  // stage k + depth - 1's is issued; after the loop nothing more is
  // issued, and each peeled stage waits for all.
  options.annotateFn =
      [&](Operation *op, scf::PipeliningOption::PipelinerPart part, unsigned) {
        auto wait = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op);
        if (!wait)
          return;
        int32_t inFlight =
            part == scf::PipeliningOption::PipelinerPart::Kernel ? last : 0;
        wait.setNumGroups(inFlight);
      };
  bool modified = false;
  rewriter.setInsertionPoint(loop);
  Location loc = loop.getLoc();
  if (succeeded(scf::pipelineForLoop(rewriter, loop, options, &modified)))
    return success();
  if (modified)
    return emitError(loc, "pipelining the stage loop failed half way");
  // Not pipelined: the copies still run asynchronously, each waited for
  // (createAsyncGroups put a wait for all after each group).
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] stage loop not pipelined\n");
  return success();
}

struct GpuPipelineStageCopiesPass
    : ke::impl::GpuPipelineStageCopiesPassBase<GpuPipelineStageCopiesPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (!loop->getParentOfType<gpu::LaunchOp>())
        return;
      bool tensorCores = false;
      for (Operation &op : *loop.getBody())
        tensorCores |= isa<nvgpu::MmaSyncOp, NVVM::MmaOp>(op);
      if (tensorCores)
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      if (failed(pipelineStageLoop(loop)))
        return signalPassFailure();
  }
};

} // namespace

//===- GpuColumnReduceRule.cpp - Reductions along an outer loop ----------===//
//
// gpu.colreduce: a reduction whose one reduction loop is not the innermost
// (ke/Workload/ColumnReduction.h: BatchNorm's statistics over the batch,
// torch.sum over a middle dimension), on GPU targets, with the fill of its
// init and at most an elementwise consumer of its result (a mean's
// scaling) in its kernel. The script only bufferizes and marks the op
// `ke.colreduce = {threads_x, threads_y, unroll}` (the consumer
// `ke.colreduce.epilogue`);
// ke-gpu-column-reduce (lib/Codegen/GpuColumnReduce.cpp) builds the kernel:
//
//   threads.x   columns per block, one per thread: a warp reads 32
//               adjacent elements of a row
//   threads.y   threads splitting the reduction loop, their partial
//               results combined through shared memory
//   unroll      rows a thread reads before it combines them (loads in
//               flight)
//
// gpu.elementwise, the only other rule that takes these ops, gives each
// thread a whole column of the reduction: BatchNorm's statistics of a
// 16384 x 4096 activation ran on 4 blocks of an H200 (KernelBench level-2
// Gemm_BatchNorm problems at 0.63x of eager, most of the difference those
// reductions).
//
//===----------------------------------------------------------------------===//

#include "GpuContraction.h"
#include "GpuRules.h"
#include "GpuSupport.h"
#include "RuleSupport.h"

#include "ke/Workload/ColumnReduction.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace ke;

namespace {

constexpr int64_t kDefaultUnroll = 4;
/// Threads of the whole grid the default aims at: eight warps' worth per
/// multiprocessor in flight keeps the loads streaming.
constexpr int64_t kThreadsPerMultiprocessor = 1024;

std::optional<ColumnReduction> getColumnReduction(Operation *anchor) {
  auto op = dyn_cast<linalg::LinalgOp>(anchor);
  if (!op || !op.hasPureTensorSemantics())
    return std::nullopt;
  return analyzeColumnReduction(op);
}

int64_t accumulatorBytes(Operation *anchor) {
  Type element = getElementTypeOrSelf(anchor->getResult(0).getType());
  return std::max<int64_t>(4, element.getIntOrFloatBitWidth() / 8);
}

struct ColumnTiles {
  int64_t threadsX, threadsY, unroll;
};

ColumnTiles tilesFor(const KnobAssignment &knobs) {
  return {knobs.get("threads.x", 32), knobs.get("threads.y", 8),
          knobs.get("unroll", kDefaultUnroll)};
}

/// Whether the kernel's consumer, if any, is one the kernel applies as
/// each result is stored: elementwise over the result, read through the
/// identity, its output written through the identity, its other operands
/// read through projected permutations (a mean's scaling, a variance's
/// epsilon and square root).
bool hasStorableConsumer(Operation *anchor) {
  Operation *consumer = findKernelNeighbours(anchor).consumer;
  if (!consumer)
    return true;
  auto op = dyn_cast<linalg::LinalgOp>(consumer);
  Value result = anchor->getResult(0);
  if (!op || !linalg::isElementwise(op) || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != cast<ShapedType>(result.getType()).getRank() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return false;
  return llvm::all_of(op->getOpOperands(), [&](OpOperand &operand) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    return (operand.get() != result || map.isIdentity()) &&
           map.isProjectedPermutation(/*allowZeroInResults=*/true);
  });
}

class GpuColumnReduceRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "gpu.colreduce"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    // The kernel stores the combined results itself, through the fused
    // consumer where there is one.
    std::optional<ColumnReduction> c = getColumnReduction(anchor);
    return target.isGpu() && c && hasStorableConsumer(anchor) &&
           getElementTypeOrSelf(anchor->getResult(0).getType())
               .isIntOrFloat() &&
           c->batch * llvm::divideCeil(c->columns, target.gpu.warpSize) <=
               std::numeric_limits<int32_t>::max();
  }

  /// The default where the reduction loop is long enough to split: below
  /// a warp's worth of rows, one thread per column reads the few rows as
  /// fast.
  bool prefersDefault(Operation *anchor,
                      const TargetDescription &target) const override {
    return getColumnReduction(anchor)->rows >= target.gpu.warpSize;
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    ColumnReduction c = *getColumnReduction(anchor);
    int64_t warp = target.gpu.warpSize;
    KnobSpace space;
    SmallVector<int64_t> xs;
    for (int64_t x = warp; x <= 8 * warp; x *= 2) {
      xs.push_back(x);
      if (x >= c.columns)
        break;
    }
    space.knobs.push_back(makeKnob("threads.x", xs, warp));
    // Enough threads along y that the grid holds about
    // kThreadsPerMultiprocessor threads per multiprocessor, at most one
    // row each.
    int64_t blocks = c.batch * llvm::divideCeil(c.columns, warp);
    int64_t wanted = llvm::divideCeil(
        int64_t(target.gpu.multiprocessors) * kThreadsPerMultiprocessor,
        blocks * warp);
    SmallVector<int64_t> ys;
    for (int64_t y = 1; y <= 32 && y <= c.rows; y *= 2)
      ys.push_back(y);
    int64_t most = std::min<int64_t>(
        c.rows, int64_t(target.gpu.maxThreadsPerBlock) / warp);
    space.knobs.push_back(makeKnob(
        "threads.y", ys, std::min<int64_t>(llvm::PowerOf2Ceil(wanted), most)));
    space.knobs.push_back(makeKnob("unroll", {1, 2, 4, 8}, kDefaultUnroll));
    return space;
  }

  LogicalResult checkLimits(Operation *anchor, const TargetDescription &target,
                            const KnobAssignment &knobs,
                            std::string &reason) const override {
    ColumnTiles t = tilesFor(knobs);
    uint64_t shared = uint64_t(t.threadsX) * t.threadsY *
                      accumulatorBytes(anchor);
    if (t.threadsY > 1 && shared > staticSharedMemoryLimit(target)) {
      reason = llvm::formatv("{0} bytes of partial results exceed the static "
                             "shared memory",
                             shared);
      return failure();
    }
    return checkBlockLimits(target, {t.threadsX, t.threadsY, 1},
                            /*registersPerThread=*/0, reason);
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    ColumnTiles t = tilesFor(knobs);
    return emitMarkScript(anchor, getName(), knobs, "ke.colreduce",
                          {{"threads_x", t.threadsX},
                           {"threads_y", t.threadsY},
                           {"unroll", t.unroll}},
                          "ke-gpu-column-reduce");
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    // In the op's loops: a block takes threads.x of the innermost loop and
    // the whole reduction loop; each thread a column and rows / threads.y
    // of it, unroll at a time.
    ColumnReduction c = *getColumnReduction(anchor);
    ColumnTiles t = tilesFor(knobs);
    unsigned n = c.ranges.size(), r = c.reductionLoop;
    SmallVector<int64_t> block(n, 1), thread(n, 0), inner(n, 0);
    block[n - 1] = std::min(t.threadsX, c.ranges[n - 1]);
    block[r] = c.rows;
    thread[r] = llvm::divideCeil(c.rows, t.threadsY);
    inner[r] = std::min(t.unroll, c.rows);
    LoopNestDescription d;
    d.ranges = c.ranges;
    d.reduction.assign(n, false);
    d.reduction[r] = true;
    d.addLevel(TileLevelRole::Threads, block, /*parallel=*/true);
    d.addLevel(TileLevelRole::Register, thread, /*parallel=*/true);
    d.addLevel(TileLevelRole::Inner, inner, /*parallel=*/false);
    d.threads = t.threadsX * t.threadsY;
    return d;
  }
};

} // namespace

const SketchRule &ke::getGpuColumnReduceRule() {
  static const GpuColumnReduceRule rule;
  return rule;
}

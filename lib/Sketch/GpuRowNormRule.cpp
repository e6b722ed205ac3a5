//===- GpuRowNormRule.cpp - Norms: a row per block, one read of the row ---===//
//
// gpu.rownorm: an elementwise anchor whose kernel holds the row reductions
// it reads (ke.row_reduction, see getRowReductions in ke/Workload/Kernel.h):
// a layer norm's mean and variance, an RMS norm's sum of squares, a
// log-softmax's maximum and sum. Run as separate kernels they read every
// row once per reduction plus once to normalize; here a block owns a row:
//   S  tile_using_forall, #gpu.block   one row per block (leading
//      dimensions other than the row's on y and z; numbered linearly on x
//      when there are more than three); the reductions and
//      their fills fused into it, latest first (each reads the earlier
//      ones' results; CSE between fusions merges the slices of a result
//      that two ops read, so it is computed once)
//   R  each reduction in program order split over the block's `threads`
//      threads (emitRowReductionOverThreads: `kvec` elements at a time
//      into partial results in shared memory, a block-wide combine, the
//      row's result in shared memory)
//   S  the elementwise op: interleaved over the threads, `kvec` adjacent
//      elements per thread in each step of threads*kvec (tileRowInterleaved:
//      coalesced stores; contiguous chunks per thread cost a quarter of the
//      bandwidth on an H200).
// Global memory sees the row about once (the reductions' and the
// elementwise op's reads of it hit L1) and the result written once.
//
// Rows no warp multiple divides (GPT-2's 50257, 4097) get a kernel built by
// ke-gpu-row-norm (lib/Codegen/GpuRowNorm.cpp) instead: the script marks
// the anchor `ke.rownorm = {row_threads, rows, vec, warp}` and bufferizes;
// each reduction's body runs over each thread's vectors of the row
// (columns past it skipped), the partials combine over the row's threads,
// then the anchor's body; knobs as the other row kernels' (GpuRowKernel.h).
//
//===----------------------------------------------------------------------===//

#include "GpuRowKernel.h"
#include "GpuRules.h"
#include "GpuSupport.h"

#include "ke/Workload/Kernel.h"

#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

#define DEBUG_TYPE "ke-sketch-gpu-rownorm"

using namespace mlir;
using namespace ke;

namespace {

struct RowNormShape {
  SmallVector<int64_t> ranges;
  unsigned elementBits = 32;
};

RowNormShape getShape(Operation *anchor) {
  auto op = cast<linalg::LinalgOp>(anchor);
  RowNormShape s;
  s.ranges = op.getStaticLoopRanges();
  s.elementBits = analyzeGpuLoops(op).elementBits;
  return s;
}

/// Whether the rows take the kernel of ke-gpu-row-norm: rows that are not
/// whole warps or wavefronts (getRowReductions groups them only where that
/// kernel can take them).
bool isRowKernel(const RowNormShape &s, const TargetDescription &target) {
  return s.ranges.back() % kTiledRowMultiple != 0 ||
         rowThreadChoices(s.ranges.back(), target).empty();
}

RowKernelShape rowKernelShape(const RowNormShape &s) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < s.ranges.size(); ++d)
    rows *= s.ranges[d];
  return {rows, s.ranges.back(), 32};
}

/// More than three row dimensions (a norm over the last dimension of a
/// 5-D tensor): the rows are numbered linearly along grid x instead of one
/// grid dimension each.
bool usesLinearBlocks(const RowNormShape &s) { return s.ranges.size() > 4; }

class GpuRowNormRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "gpu.rownorm"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    auto op = dyn_cast<linalg::LinalgOp>(anchor);
    if (!target.isGpu() || !op || !op.hasPureTensorSemantics() ||
        findKernelNeighbours(anchor).rowReductions == 0)
      return false;
    RowNormShape s = getShape(anchor);
    if (s.ranges.size() < 2 ||
        llvm::any_of(s.ranges, ShapedType::isDynamic)) {
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] no: not a static nest of "
                              << "rank 2 or more\n");
      return false;
    }
    // Rows no warp multiple divides: the kernel ke-gpu-row-norm builds
    // (all rows along grid x; checkLimits bounds the blocks).
    if (isRowKernel(s, target))
      return true;
    if (usesLinearBlocks(s)) {
      // All rows on grid x, at most 2^31 - 1 blocks.
      int64_t rows = 1;
      for (size_t d = 0; d + 1 < s.ranges.size(); ++d)
        rows *= s.ranges[d];
      if (rows > std::numeric_limits<int32_t>::max()) {
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] no: " << rows
                                << " rows exceed the grid\n");
        return false;
      }
    } else {
      // Leading dimensions other than the rows map to grid y and z.
      for (size_t d = 0; d + 2 < s.ranges.size(); ++d)
        if (s.ranges[d] > 65535) {
          LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] no: leading dimension "
                                  << d << " exceeds the grid's 65535\n");
          return false;
        }
    }
    return true;
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    RowNormShape s = getShape(anchor);
    if (isRowKernel(s, target))
      return getRowKernelKnobs(rowKernelShape(s), target);
    int64_t cols = s.ranges.back(), vector = vectorElements(s.elementBits);
    KnobSpace space;
    Knob threads{"threads", rowThreadChoices(cols, target), 0};
    // A few 128-bit vectors per thread by default.
    threads.defaultIndex = nearestChoice(threads.choices, cols / (4 * vector));
    space.knobs.push_back(threads);
    space.knobs.push_back(makeRowVectorKnob("kvec", threads, cols, vector, 16));
    return space;
  }

  LogicalResult checkLimits(Operation *anchor, const TargetDescription &target,
                            const KnobAssignment &knobs,
                            std::string &reason) const override {
    RowNormShape s = getShape(anchor);
    if (isRowKernel(s, target))
      return checkRowKernelLimits(rowKernelShape(s), target, knobs, reason);
    int64_t cols = s.ranges.back();
    int64_t threads = knobs.get("threads", target.gpu.warpSize);
    int64_t kvec = knobs.get("kvec", 1);
    if (!llvm::is_contained(rowThreadChoices(cols, target), threads)) {
      reason = "threads must be a multiple of the warp dividing the row";
      return failure();
    }
    if ((cols / threads) % kvec != 0) {
      reason = "kvec must divide each thread's chunk of the row";
      return failure();
    }
    // Partial results and row results of every reduction in shared memory.
    int64_t reductions = findKernelNeighbours(anchor).rowReductions;
    int64_t bytes = reductions * (threads + 1) * 4;
    if (uint64_t(bytes) > staticSharedMemoryLimit(target)) {
      reason = llvm::formatv("{0} bytes of partial results exceed the static "
                             "shared memory",
                             bytes);
      return failure();
    }
    return checkBlockLimits(target, {threads, 1, 1},
                            3 * kvec * s.elementBits / 32 + 24, reason);
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    auto op = cast<linalg::LinalgOp>(anchor);
    RowNormShape s = getShape(anchor);
    // A linalg op keeps its attributes through bufferization.
    if (isRowKernel(s, target))
      return emitRowKernelScript(getName(), anchor->getName().getStringRef(),
                                 "ke.rownorm", "ke-gpu-row-norm",
                                 /*markBefore=*/true, target, knobs);
    unsigned rank = s.ranges.size();
    int64_t threads = knobs.get("threads", target.gpu.warpSize);
    int64_t kvec = knobs.get("kvec", 1);
    unsigned count = findKernelNeighbours(anchor).rowReductions;

    ScriptWriter w;
    w.comment("sketch gpu.rownorm: " + knobs.str());
    std::string anchorHandle =
        w.match(anchor->getName().getStringRef(), kAnchorAttr);
    std::string all = w.match("", kRowReductionAttr);
    SmallVector<std::string> reductions, fills;
    for (unsigned i = 0; i < count; ++i)
      reductions.push_back(w.fresh("reduction"));
    if (count == 1) {
      reductions.front() = all;
    } else {
      SmallVector<std::string> types(count, "!transform.any_op");
      w.line(llvm::formatv("{0} = transform.split_handle {1} : "
                           "(!transform.any_op) -> ({2})",
                           llvm::join(reductions, ", "), all,
                           llvm::join(types, ", ")));
    }
    // Each reduction's init is its fill (one init, after the inputs).
    SmallVector<linalg::LinalgOp> payload;
    anchor->getParentOp()->walk([&](linalg::LinalgOp reduction) {
      if (reduction->hasAttr(kRowReductionAttr))
        payload.push_back(reduction);
    });
    for (auto [handle, reduction] : llvm::zip(reductions, payload)) {
      std::string fill = w.fresh("fill");
      w.line(llvm::formatv("{0} = transform.get_producer_of_operand {1}[{2}] "
                           ": (!transform.any_op) -> !transform.any_op",
                           fill, handle, reduction.getNumDpsInputs()));
      fills.push_back(fill);
    }
    std::string anchorFill;
    if (op.getDpsInits()[0].getDefiningOp<linalg::FillOp>()) {
      anchorFill = w.fresh("fill");
      w.line(llvm::formatv("{0} = transform.get_producer_of_operand {1}[{2}] "
                           ": (!transform.any_op) -> !transform.any_op",
                           anchorFill, anchorHandle, op.getNumDpsInputs()));
    }

    w.comment("S: one row per block, the reductions fused into it");
    SmallVector<int64_t> block(rank, 1);
    block.back() = 0;
    SmallVector<std::string> blockIds;
    for (unsigned d = 0; d + 1 < rank; ++d)
      blockIds.push_back(
          usesLinearBlocks(s)
              ? "#gpu.block<linear_dim_" + std::to_string(rank - 2 - d) + ">"
              : mappingAttr("block", d, rank - 1));
    std::string blockForall;
    std::string tiled = tileUsingForallMapped(
        w, anchorHandle, block, "[" + llvm::join(blockIds, ", ") + "]",
        blockForall);
    std::string func = w.fresh("func");
    w.line(func + " = transform.structured.match ops{[\"func.func\"]} in " +
           "%root : (!transform.any_op) -> !transform.any_op");
    if (!anchorFill.empty())
      w.fuseInto(anchorFill, blockForall);
    for (unsigned i = count; i-- > 0;) {
      // Slices of an earlier result read by two fused ops become one.
      w.line("transform.apply_cse to " + func + " : !transform.any_op");
      w.fuseInto(reductions[i], blockForall);
      // No CSE after this: the fused fills are alike, and merged they would
      // make two reductions share one result buffer.
      w.fuseInto(fills[i], blockForall);
    }

    // The fused fills write slices of a tensor.empty: as empty tensors of
    // their own, their shared-memory copies start without a copy-in.
    w.line("transform.apply_patterns to " + func + " {");
    w.line("  transform.apply_patterns.tensor.fold_tensor_empty");
    w.line("} : !transform.any_op");
    for (unsigned i = 0; i < count; ++i) {
      w.comment(llvm::formatv("R: row reduction {0} over the block's threads",
                              i));
      emitRowReductionOverThreads(w, reductions[i], fills[i], "", rank,
                                  threads, kvec);
    }
    w.comment("S: the elementwise op over the threads, interleaved: kvec "
              "adjacent elements per thread in each step of threads*kvec");
    std::string loop, threadForall;
    tileRowInterleaved(w, tiled, rank, threads, kvec, loop, threadForall);
    if (!anchorFill.empty()) {
      std::string fillLoop, fillForall;
      tileRowInterleaved(w, anchorFill, rank, threads, kvec, fillLoop,
                         fillForall);
    }
    std::optional<std::array<int64_t, 3>> grid;
    if (usesLinearBlocks(s)) {
      int64_t rows = 1;
      for (unsigned d = 0; d + 1 < rank; ++d)
        rows *= s.ranges[d];
      grid = std::array<int64_t, 3>{rows, 1, 1};
    }
    emitGpuEpilogue(w, {threads, 1, 1}, /*mapToBlocks=*/true,
                    /*eliminateBarriers=*/true, grid);
    return w.finish();
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    if (isRowKernel(getShape(anchor), target))
      return describeRowKernel(getShape(anchor).ranges, knobs);
    return describeRowPerBlock(getShape(anchor).ranges,
                               knobs.get("threads", target.gpu.warpSize),
                               knobs.get("kvec", 1));
  }
};

} // namespace

const SketchRule &ke::getGpuRowNormRule() {
  static const GpuRowNormRule rule;
  return rule;
}

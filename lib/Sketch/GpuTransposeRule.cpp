//===- GpuTransposeRule.cpp - Transposes through shared memory ------------===//
//
// gpu.transpose: a linalg.transpose whose input and output hold different
// dimensions innermost (ke/Workload/Transpose.h: after merging the
// dimensions that move together), on GPU targets, with nothing fused into
// its kernel. The script only bufferizes and marks the op `ke.transpose =
// {tile, rows}`; ke-gpu-transpose (lib/Codegen/GpuTranspose.cpp) builds
// the kernel:
//
//   tile     a block moves tile x tile elements: the input's innermost
//            dimension by the output's
//   rows     threads along the second tile dimension (tile x rows threads,
//            tile / rows elements each)
//
// Reads run along the input's innermost dimension and writes along the
// output's, each through a shared tile, so both are whole 128-byte lines.
// Before it, gpu.elementwise mapped threads along the output alone and read
// the input with a stride: NCHW -> NHWC of ResNet's 32 x 256 x 56 x 56 at
// 43% of the H200's copy bandwidth (113 us, as long as the 1x1 convolution
// it feeds); this kernel moves it at 98% (49.4 us). Where a moved extent
// is below a tile (an image's 3 channels) gpu.elementwise stays the
// default (prefersDefault).
//
//===----------------------------------------------------------------------===//

#include "GpuContraction.h"
#include "GpuRules.h"
#include "GpuSupport.h"
#include "RuleSupport.h"

#include "ke/Workload/Transpose.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ke;

namespace {

constexpr int64_t kDefaultTile = 32;

/// The merged transpose of an anchor the rule takes, or nothing.
std::optional<MergedTranspose> getTranspose(Operation *anchor) {
  auto op = dyn_cast<linalg::TransposeOp>(anchor);
  if (!op || !op.hasPureTensorSemantics())
    return std::nullopt;
  auto type = cast<ShapedType>(op.getInit().getType());
  if (!type.hasStaticShape() || type.getNumElements() == 0)
    return std::nullopt;
  MergedTranspose t = mergeTranspose(type.getShape(), op.getPermutation());
  if (!t.movesInnermost())
    return std::nullopt;
  return t;
}

int64_t elementBytes(Operation *anchor) {
  Type element = getElementTypeOrSelf(
      cast<linalg::TransposeOp>(anchor).getInit().getType());
  return std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
}

class GpuTransposeRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "gpu.transpose"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    // The kernel stores the moved elements itself: a fused consumer would
    // need an epilogue.
    return target.isGpu() && getTranspose(anchor) &&
           !findKernelNeighbours(anchor).consumer &&
           getElementTypeOrSelf(anchor->getResult(0).getType())
               .isIntOrFloat();
  }

  /// The default where both moved extents fill a default tile: with fewer
  /// (an image's 3 channels) most of a square's threads idle, and
  /// gpu.elementwise's strided reads stay within a few lines (H200,
  /// 2026-11-29: NCHW -> NHWC of 8 x 3 x 229 x 229, 49.8 us against 13.3;
  /// of 32 x 256 x 56 x 56, 49.4 us against 113).
  bool prefersDefault(Operation *anchor,
                      const TargetDescription &target) const override {
    MergedTranspose t = *getTranspose(anchor);
    return std::min(t.shape.back(), t.shape[t.inputInnermost()]) >=
           kDefaultTile;
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    KnobSpace space;
    space.knobs.push_back(makeKnob("tile", {16, 32, 64}, kDefaultTile));
    space.knobs.push_back(makeKnob("rows", {2, 4, 8, 16}, 8));
    return space;
  }

  LogicalResult checkLimits(Operation *anchor, const TargetDescription &target,
                            const KnobAssignment &knobs,
                            std::string &reason) const override {
    int64_t tile = knobs.get("tile", kDefaultTile), rows = knobs.get("rows", 8);
    if (rows > tile) {
      reason = llvm::formatv("{0} rows of threads exceed the {1}-element tile",
                             rows, tile);
      return failure();
    }
    uint64_t shared = uint64_t(tile) * (tile + 1) * elementBytes(anchor);
    if (shared > staticSharedMemoryLimit(target)) {
      reason = llvm::formatv("a {0}x{0} tile needs {1} bytes of shared memory",
                             tile, shared);
      return failure();
    }
    return checkBlockLimits(target, {tile, rows, 1}, /*registersPerThread=*/0,
                            reason);
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    return emitMarkScript(anchor, getName(), knobs, "ke.transpose",
                          {{"tile", knobs.get("tile", kDefaultTile)},
                           {"rows", knobs.get("rows", 8)}},
                          "ke-gpu-transpose");
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    // In the op's own loops (the output's dimensions): a block takes a tile
    // along the innermost dimension of the output's innermost group and of
    // the group the input holds innermost, each thread tile / rows
    // elements of the latter.
    MergedTranspose t = *getTranspose(anchor);
    int64_t tile = knobs.get("tile", kDefaultTile), rows = knobs.get("rows", 8);
    SmallVector<int64_t> ranges =
        cast<linalg::LinalgOp>(anchor).getStaticLoopRanges();
    unsigned outInner = t.outputGroups.back().back();
    unsigned inInner = t.outputGroups[t.inputInnermost()].back();
    SmallVector<int64_t> block(ranges.size(), 1), thread(ranges.size(), 0);
    block[outInner] = std::min(tile, ranges[outInner]);
    block[inInner] = std::min(tile, ranges[inInner]);
    thread[inInner] = std::max<int64_t>(1, block[inInner] / rows);
    LoopNestDescription d;
    d.ranges = ranges;
    d.reduction.assign(ranges.size(), false);
    d.addLevel(TileLevelRole::Threads, block, /*parallel=*/true);
    d.addLevel(TileLevelRole::Register, thread, /*parallel=*/true);
    d.threads = tile * rows;
    return d;
  }
};

} // namespace

const SketchRule &ke::getGpuTransposeRule() {
  static const GpuTransposeRule rule;
  return rule;
}

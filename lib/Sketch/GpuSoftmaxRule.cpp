//===- GpuSoftmaxRule.cpp - Softmax rows over blocks and threads ----------===//
//
// gpu.softmax: linalg.softmax over its last dimension. The op is tiled
// before it is decomposed, so that every intermediate (row maximum, the
// exponentials, row sum) belongs to one thread and never needs a buffer of
// the kernel module:
//   S  tile_using_forall, #gpu.block   `rows` rows per block (leading
//      dimensions other than the last-but-one: one per block, on y and z)
//   S  tile_using_forall, #gpu.thread  one row per thread
//   then decompose_interface (max, subtract-exp, sum, divide) and each part
//   tiled by `vec` elements of its row (scf.for), vectorized.
// A row's exponentials live in private memory: the rule applies up to
// kMaxRowBytes per row.
//
//===----------------------------------------------------------------------===//

#include "GpuRules.h"

#include "ke/Workload/Kernel.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ke;

namespace {

/// The most bytes of one row that a thread keeps (its exponentials).
constexpr int64_t kMaxRowBytes = 16 * 1024;

struct SoftmaxShape {
  SmallVector<int64_t> shape;
  unsigned elementBits = 32;
};

std::optional<SoftmaxShape> getSoftmaxShape(Operation *anchor) {
  auto softmax = dyn_cast<linalg::SoftmaxOp>(anchor);
  if (!softmax || !softmax.hasPureTensorSemantics())
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(softmax.getInput().getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 2 ||
      type.getRank() > 4 ||
      softmax.getDimension() != uint64_t(type.getRank() - 1) ||
      !type.getElementType().isIntOrFloat())
    return std::nullopt;
  SoftmaxShape s;
  s.shape.assign(type.getShape().begin(), type.getShape().end());
  s.elementBits = std::max(8u, type.getElementType().getIntOrFloatBitWidth());
  return s;
}

class GpuSoftmaxRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "gpu.softmax"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    std::optional<SoftmaxShape> s = getSoftmaxShape(anchor);
    return target.isGpu() && s &&
           s->shape.back() * s->elementBits / 8 <= kMaxRowBytes;
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    SoftmaxShape s = *getSoftmaxShape(anchor);
    int64_t rows = s.shape[s.shape.size() - 2], cols = s.shape.back();
    KnobSpace space;
    // Rows per block = threads per block (one row each): up to 8 warps.
    Knob rowKnob{"rows", {}, 0};
    for (int64_t r : tileCandidates(rows, target.gpu.maxThreadsPerBlock))
      if (rows % r == 0)
        rowKnob.choices.push_back(r);
    rowKnob.defaultIndex =
        nearestChoice(rowKnob.choices, 4 * int64_t(target.gpu.warpSize));
    if (rowKnob.choices[rowKnob.defaultIndex] > 4 * target.gpu.warpSize &&
        rowKnob.defaultIndex > 0)
      --rowKnob.defaultIndex;
    space.knobs.push_back(rowKnob);
    Knob vec{"vec", {}, 0};
    for (int64_t v : tileCandidates(cols, 4 * vectorElements(s.elementBits)))
      if (cols % v == 0)
        vec.choices.push_back(v);
    unsigned best = 0;
    for (auto [index, v] : llvm::enumerate(vec.choices))
      if (v <= vectorElements(s.elementBits))
        best = index;
    vec.defaultIndex = best;
    space.knobs.push_back(vec);
    return space;
  }

  LogicalResult checkLimits(Operation *anchor, const TargetDescription &target,
                            const KnobAssignment &knobs,
                            std::string &reason) const override {
    SoftmaxShape s = *getSoftmaxShape(anchor);
    int64_t rows = knobs.get("rows", 1), vec = knobs.get("vec", 1);
    if (s.shape[s.shape.size() - 2] % rows != 0 || s.shape.back() % vec != 0) {
      reason = "rows and vec must divide the shape";
      return failure();
    }
    // Leading dimensions other than the rows map to grid y and z.
    for (size_t d = 0; d + 2 < s.shape.size(); ++d)
      if (s.shape[d] > 65535) {
        reason = "a leading dimension exceeds 65535 blocks";
        return failure();
      }
    return checkBlockLimits(target, {rows, 1, 1}, 3 * vec + 24, reason);
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    SoftmaxShape s = *getSoftmaxShape(anchor);
    unsigned rank = s.shape.size();
    int64_t rows = knobs.get("rows", 1), vec = knobs.get("vec", 1);
    ScriptWriter w;
    w.comment("sketch gpu.softmax: " + knobs.str());
    std::string softmax = w.match("linalg.softmax", kAnchorAttr);

    // Block tiles: `rows` on the last-but-one dimension (x), one on the
    // other leading dimensions (y, z), none on the softmax dimension.
    SmallVector<int64_t> block(rank, 1), thread(rank, 0);
    block[rank - 2] = rows;
    block[rank - 1] = 0;
    thread[rank - 2] = 1;
    SmallVector<std::string> blockIds;
    for (unsigned d = 0; d + 1 < rank; ++d)
      blockIds.push_back(mappingAttr("block", d, rank - 1));
    std::string blockForall, threadForall;
    w.comment("S: rows per block");
    std::string tiled = tileUsingForallMapped(
        w, softmax, block, "[" + llvm::join(blockIds, ", ") + "]",
        blockForall);
    w.comment("S: one row per thread");
    tiled = tileUsingForallMapped(w, tiled, thread, "[#gpu.thread<x>]",
                                  threadForall);
    w.comment("max, subtract-exp, sum and divide of the thread's row");
    w.line(llvm::formatv("{0} = transform.structured.decompose_interface {1} "
                         ": (!transform.any_op) -> !transform.any_op",
                         w.fresh("parts"), tiled));
    std::string parts = w.fresh("parts");
    w.line(parts + " = transform.structured.match ops{[\"linalg.generic\"]} "
                   "in " +
           threadForall + " : (!transform.any_op) -> !transform.any_op");
    w.comment("R: `vec` elements of the row at a time");
    SmallVector<int64_t> inner(rank, 0);
    inner.back() = vec;
    w.line("transform.foreach " + parts + " : !transform.any_op {");
    w.line("^bb0(%part: !transform.any_op):");
    w.line(llvm::formatv("  %piece, %loop = transform.structured."
                         "tile_using_for %part tile_sizes {0} : "
                         "(!transform.any_op) -> (!transform.any_op, "
                         "!transform.any_op)",
                         ScriptWriter::list(inner)));
    w.line("}");
    emitGpuEpilogue(w, {rows, 1, 1}, /*mapToBlocks=*/true);
    return w.finish();
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    SoftmaxShape s = *getSoftmaxShape(anchor);
    unsigned rank = s.shape.size();
    int64_t rows = knobs.get("rows", 1), vec = knobs.get("vec", 1);
    LoopNestDescription d;
    d.ranges = s.shape;
    d.reduction.assign(rank, false);
    d.reduction.back() = true;
    SmallVector<int64_t> block(rank, 1), thread(rank, 0), inner(rank, 0);
    block[rank - 2] = rows;
    block[rank - 1] = 0;
    thread[rank - 2] = 1;
    inner.back() = vec;
    d.addLevel(TileLevelRole::Threads, block, /*parallel=*/true);
    d.addLevel(TileLevelRole::Register, thread, /*parallel=*/true);
    d.addLevel(TileLevelRole::Inner, inner, /*parallel=*/false);
    d.threads = rows;
    d.vectorLoop = rank - 1;
    d.vectorWidth = vec;
    return d;
  }
};

} // namespace

const SketchRule &ke::getGpuSoftmaxRule() {
  static const GpuSoftmaxRule rule;
  return rule;
}

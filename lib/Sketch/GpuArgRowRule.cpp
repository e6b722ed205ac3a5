//===- GpuArgRowRule.cpp - argmax / argmin rows on a built kernel ---------===//
//
// gpu.argrow: an arg reduction over the innermost loop
// (ke/Workload/ArgReduction.h: the first maximum or minimum of each row
// and its position, as torch-mlir writes torch.argmax over the last
// dimension) with values of at most 32 bits and no consumer in its kernel.
// The script bufferizes the kernel and marks the op `ke.argrow =
// {row_threads, rows, vec, warp}`; ke-gpu-row-argmax
// (lib/Codegen/GpuRowArgmax.cpp) builds the kernel: `rows` rows of
// `row_threads` threads per block, each thread's `vec`-element vectors of
// the row scanned once, the threads' results combined (ties to the smaller
// position), the fills folded in. Rows of any length: vectors past the row
// are skipped. The knobs and their defaults are the row kernels'
// (GpuRowKernel.h).
//
// Before it, a two-result reduction had no rule but gpu.elementwise, which
// scans each row in one thread: 0.01x of PyTorch for GPT-2's greedy
// decoding (1024 rows of 50257) on an H200.
//
//===----------------------------------------------------------------------===//

#include "GpuRowKernel.h"
#include "GpuRules.h"
#include "RuleSupport.h"

#include "ke/Workload/ArgReduction.h"

using namespace mlir;
using namespace ke;

namespace {

/// The rows of an arg reduction the rule takes, or nothing.
std::optional<RowKernelShape> getShape(Operation *anchor) {
  auto op = dyn_cast<linalg::LinalgOp>(anchor);
  if (!op || !op.hasPureTensorSemantics())
    return std::nullopt;
  std::optional<ArgReduction> arg = matchArgReduction(op);
  if (!arg || cast<FloatType>(arg->valueType).getWidth() > 32)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  RowKernelShape s;
  s.cols = ranges.back();
  s.rows = 1;
  for (size_t d = 0; d + 1 < ranges.size(); ++d)
    s.rows *= ranges[d];
  s.elementBits = cast<FloatType>(arg->valueType).getWidth();
  if (s.rows == 0 || s.cols == 0)
    return std::nullopt;
  return s;
}

class GpuArgRowRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "gpu.argrow"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    // The kernel stores the row's result itself: a consumer would need an
    // epilogue.
    return target.isGpu() && getShape(anchor) &&
           !findKernelNeighbours(anchor).consumer;
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    return getRowKernelKnobs(*getShape(anchor), target);
  }

  LogicalResult checkLimits(Operation *anchor, const TargetDescription &target,
                            const KnobAssignment &knobs,
                            std::string &reason) const override {
    return checkRowKernelLimits(*getShape(anchor), target, knobs, reason);
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    // A linalg op keeps its attributes through bufferization.
    return emitRowKernelScript(getName(),
                               anchor->getName().getStringRef(), "ke.argrow",
                               "ke-gpu-row-argmax", /*markBefore=*/true,
                               target, knobs);
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    return describeRowKernel(
        cast<linalg::LinalgOp>(anchor).getStaticLoopRanges(), knobs);
  }
};

} // namespace

const SketchRule &ke::getGpuArgRowRule() {
  static const GpuArgRowRule rule;
  return rule;
}

//===- CpuLoopsRule.cpp - The op's own loops, unscheduled -----------------===//
//
// cpu.loops: no transformation at all. The kernel is lowered as the
// reference is (plain loops in the op's iteration order), so that the
// search always holds a candidate as fast as the unscheduled reference:
// the tuner measures every sketch without knobs once before it samples
// (lib/Search/Tuner.cpp), and a workload on which no tiling, vectorization
// or threading pays (a tiny softmax over rows of 197, a 25x48x24 matmul)
// keeps its loops instead of tuning slower than the reference (issue #16:
// 5 of 91 CPU workloads did, up to 3.7x slower). Last in the CPU rules, so
// it is never the untuned default. Not for 16-bit ops: their loops as
// written accumulate in 16 bits.
//
//===----------------------------------------------------------------------===//

#include "CpuRules.h"
#include "RuleSupport.h"
#include "ScriptWriter.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace ke;

namespace {

class CpuLoopsRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "cpu.loops"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    // 16-bit ops as written sum in 16 bits, which the accurate reference
    // rejects (a 8x1000 f16 softmax: 1.6e-2 relative, tolerance 1e-2); the
    // other rules compute them in f32.
    if (!target.isCpu() ||
        llvm::any_of(anchor->getOperandTypes(), [](Type type) {
          auto element = dyn_cast<FloatType>(getElementTypeOrSelf(type));
          return element && element.getWidth() < 32;
        }))
      return false;
    if (auto op = dyn_cast<linalg::LinalgOp>(anchor))
      return isStaticTensorOp(op);
    return isa<linalg::SoftmaxOp>(anchor);
  }

  KnobSpace getKnobSpace(Operation *, const TargetDescription &) const override {
    return {};
  }

  std::string emitScript(Operation *anchor, const TargetDescription &,
                         const KnobAssignment &knobs) const override {
    // What the reference's script does (getReferenceScript): a softmax is
    // decomposed into its generics, which lower to loops.
    ScriptWriter w;
    w.comment("sketch cpu.loops: the op's own loops, as the reference");
    if (isa<linalg::SoftmaxOp>(anchor)) {
      std::string softmax = w.match("linalg.softmax", kAnchorAttr);
      w.line(w.fresh("parts") + " = transform.structured.decompose_interface " +
             softmax + " : (!transform.any_op) -> !transform.any_op");
    }
    return w.finish();
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    LoopNestDescription d;
    if (auto softmax = dyn_cast<linalg::SoftmaxOp>(anchor)) {
      // Its decomposition's loops: the rows, then the softmax dimension.
      auto type = cast<ShapedType>(softmax.getInput().getType());
      d.ranges.assign(type.getShape().begin(), type.getShape().end());
      d.reduction.assign(type.getRank(), false);
      d.reduction[softmax.getDimension()] = true;
    } else {
      auto op = cast<linalg::LinalgOp>(anchor);
      d.ranges = op.getStaticLoopRanges();
      for (utils::IteratorType type : op.getIteratorTypesArray())
        d.reduction.push_back(type == utils::IteratorType::reduction);
    }
    // One sequential level: the whole nest in one thread, in order.
    d.addLevel(TileLevelRole::Inner, d.ranges, /*parallel=*/false);
    d.threads = 1;
    return d;
  }
};

} // namespace

const SketchRule &ke::getCpuLoopsRule() {
  static const CpuLoopsRule rule;
  return rule;
}

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
// cpu.loops.parallel: the same loops, the outermost split across the cores
// as the reference's OpenMP loops split them (one scf.forall per op of the
// kernel group, each thread's rows in the op's order). The reference runs on every core: where no
// tiling beats it, the sequential cpu.loops could not either (the 4 x 50257
// row maximum of GPT-2's log-softmax: 14.6 us tuned against the
// reference's 12.0 on this machine's 2 cores). Its space is one schedule
// (a threads knob of one choice, the cores), measured once like cpu.loops.
//
//===----------------------------------------------------------------------===//

#include "CpuRules.h"
#include "RuleSupport.h"
#include "ScriptWriter.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace ke;

namespace {

/// True for the ops whose own loops are a candidate on `target`: static
/// linalg ops and softmax on a CPU, of 32 bits or more. 16-bit ops as
/// written sum in 16 bits, which the accurate reference rejects (a 8x1000
/// f16 softmax: 1.6e-2 relative, tolerance 1e-2); the other rules compute
/// them in f32.
bool hasCandidateLoops(Operation *anchor, const TargetDescription &target) {
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

class CpuLoopsRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "cpu.loops"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    return hasCandidateLoops(anchor, target);
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

class CpuParallelLoopsRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "cpu.loops.parallel"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    // Softmax decomposes into several generics: left to cpu.softmax and
    // cpu.loops.
    auto op = dyn_cast<linalg::LinalgOp>(anchor);
    return op && target.cpu.cores >= 2 && hasCandidateLoops(anchor, target) &&
           hasOuterParallelLoop(op);
  }

  KnobSpace getKnobSpace(Operation *,
                         const TargetDescription &target) const override {
    // One choice: the evaluator and compile read the thread count from the
    // schedule's `threads`, and the sketch stays one schedule.
    KnobSpace space;
    space.knobs.push_back(Knob{"threads", {int64_t(target.cpu.cores)}, 0});
    return space;
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    ScriptWriter w;
    w.comment("sketch cpu.loops.parallel: the ops' own loops, the outermost "
              "split across the threads");
    // Like the reference, every op of the kernel group (the anchor, its
    // fills and fused elementwise consumers) runs its own parallel loop:
    // the ops of each name in IR order, split into one handle each.
    llvm::MapVector<StringRef, SmallVector<linalg::LinalgOp>> byName;
    anchor->getBlock()->walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
      byName[op->getName().getStringRef()].push_back(op);
    });
    int64_t threads = knobs.get("threads", 1);
    for (auto &[name, ops] : byName) {
      SmallVector<std::string> handles = {w.match(name)};
      if (ops.size() > 1)
        handles = w.splitHandle(handles.front(), ops.size(), "op");
      for (auto [op, handle] : llvm::zip(ops, handles)) {
        if (!hasOuterParallelLoop(op))
          continue;
        std::string forall;
        w.tileUsingForall(handle, getThreadTiles(op, threads), forall);
      }
    }
    return w.finish();
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    auto op = cast<linalg::LinalgOp>(anchor);
    LoopNestDescription d;
    d.ranges = op.getStaticLoopRanges();
    for (utils::IteratorType type : op.getIteratorTypesArray())
      d.reduction.push_back(type == utils::IteratorType::reduction);
    d.addLevel(TileLevelRole::Threads,
               getThreadTiles(op, knobs.get("threads", 1)),
               /*parallel=*/true);
    // Inside each thread's tile, the whole nest in order.
    d.addLevel(TileLevelRole::Inner, {}, /*parallel=*/false);
    d.threads = knobs.get("threads", 1);
    return d;
  }

private:
  /// True when `op`'s outermost loop is parallel with 2 or more iterations
  /// (static): a loop to split across threads.
  static bool hasOuterParallelLoop(linalg::LinalgOp op) {
    if (op.getNumLoops() == 0 || !op.hasPureTensorSemantics() ||
        op.getIteratorTypesArray().front() != utils::IteratorType::parallel)
      return false;
    int64_t range = op.getStaticLoopRanges().front();
    return !ShapedType::isDynamic(range) && range >= 2;
  }

  /// Tile sizes of the forall: the outermost loop in one contiguous block
  /// per thread, as an OpenMP static schedule splits it.
  static SmallVector<int64_t> getThreadTiles(linalg::LinalgOp op,
                                             int64_t threads) {
    SmallVector<int64_t> tiles(op.getNumLoops(), 0);
    tiles[0] = llvm::divideCeil(op.getStaticLoopRanges().front(),
                                std::max<int64_t>(1, threads));
    return tiles;
  }
};

} // namespace

const SketchRule &ke::getCpuLoopsRule() {
  static const CpuLoopsRule rule;
  return rule;
}

const SketchRule &ke::getCpuParallelLoopsRule() {
  static const CpuParallelLoopsRule rule;
  return rule;
}

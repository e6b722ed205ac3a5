//===- CpuRowsRule.cpp - Row reductions fused with their reader on CPU ----===//
//
// cpu.rows: a kernel group of an elementwise op and the row reductions it
// reads (getRowReductions: layer norm's mean and variance, log-softmax's
// maximum and sum, RMS norm's sum of squares; KernelFusion::RowReductions)
// in one pass over blocks of rows, as cpu.softmax does for linalg.softmax:
//
//   forall.d0   rows per block, the blocks across `threads` OpenMP threads:
//               the elementwise op is tiled into the scf.forall and every
//               reduction (with its fill) is fused into it, so a block's
//               rows are read from memory once and re-read from cache by
//               the later parts; no reduction result is a whole tensor
//   vec         each part then walks one row `vec` elements at a time; the
//               reductions carry `vec` partial results across the row and
//               combine them once (tile_reduction_using_for)
//
// Without it each reduction is a workload of its own that reads every row
// from memory (three passes over a layer norm's input, plus its output).
//
//===----------------------------------------------------------------------===//

#include "CpuRules.h"
#include "CpuSupport.h"
#include "ScriptWriter.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ke;

namespace {

/// The group's ops besides the anchor, in program order: each reduction and
/// the fill of its init.
SmallVector<Operation *> getRowProducers(Operation *anchor) {
  SmallVector<Operation *> producers;
  for (Operation *reduction : getRowReductions(anchor)) {
    for (Value init : cast<linalg::LinalgOp>(reduction).getDpsInits())
      if (auto fill = init.getDefiningOp<linalg::FillOp>())
        producers.push_back(fill);
    producers.push_back(reduction);
  }
  llvm::sort(producers,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return producers;
}

RankedTensorType getRowsType(Operation *anchor) {
  return cast<RankedTensorType>(anchor->getResult(0).getType());
}

class CpuRowsRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "cpu.rows"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    if (!target.isCpu() || getRowReductions(anchor).empty())
      return false;
    // Every reduction's init is a fill of its own (the fills are fused).
    for (Operation *reduction : getRowReductions(anchor))
      for (Value init : cast<linalg::LinalgOp>(reduction).getDpsInits())
        if (!init.getDefiningOp<linalg::FillOp>())
          return false;
    // The anchor's init is not a fill (it is overwritten).
    return llvm::none_of(cast<linalg::LinalgOp>(anchor).getDpsInits(),
                         [](Value init) {
                           return init.getDefiningOp<linalg::FillOp>();
                         });
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    // The input rows and the results.
    return makeRowKnobs(getRowsType(anchor), target, /*buffersPerRow=*/2);
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    ScriptWriter w;
    w.comment("sketch cpu.rows: " + knobs.str());
    RankedTensorType type = getRowsType(anchor);
    int64_t rank = type.getRank();
    SmallVector<Operation *> producers = getRowProducers(anchor);
    int64_t numReductions = llvm::count_if(producers, [](Operation *op) {
      return !isa<linalg::FillOp>(op);
    });
    int64_t numFills = producers.size() - numReductions;
    // The kernel holds the group alone: its reductions and fills are the
    // generics with one (last) reduction loop and the fills, in order.
    SmallVector<std::string> iterators(rank, "#linalg.iterator_type<parallel>");
    iterators.back() = "#linalg.iterator_type<reduction>";
    std::string allReductions = w.fresh("reductions");
    w.line(llvm::formatv("{0} = transform.structured.match "
                         "ops{{[\"linalg.generic\"]} attributes "
                         "{{iterator_types = [{1}]} in %root : "
                         "(!transform.any_op) -> !transform.any_op",
                         allReductions, llvm::join(iterators, ", ")));
    w.comment("the reductions and their fills, in program order");
    SmallVector<std::string> reductions =
        w.splitHandle(allReductions, numReductions, "red");
    SmallVector<std::string> fills =
        w.splitHandle(w.match("linalg.fill"), numFills, "fill");
    std::string anchorHandle = w.match("", "ke.anchor");
    int64_t rows = knobs.get("forall.d0", 1), vec = knobs.get("vec", 16);
    w.comment("blocks of rows across threads: the elementwise op's, every "
              "reduction and fill fused into them, the last first");
    SmallVector<int64_t> blockTiles(rank - 1, 0);
    blockTiles[0] = rows;
    std::string forall;
    std::string tiledAnchor = w.tileUsingForall(anchorHandle, blockTiles, forall);
    // Handles in program order, fused from the last (each is then used in
    // the loop by the time it is fused).
    SmallVector<std::string> handles;
    int64_t r = 0, f = 0;
    for (Operation *op : producers)
      handles.push_back(isa<linalg::FillOp>(op) ? fills[f++]
                                                : reductions[r++]);
    for (int64_t i = handles.size() - 1; i >= 0; --i)
      w.fuseInto(handles[i], forall);
    w.comment("one row at a time, `vec` elements at once; the reductions "
              "carry `vec` partial results across the row");
    SmallVector<std::string> loops;
    SmallVector<int64_t> rowTiles(rank, 1);
    rowTiles.back() = vec;
    w.tileUsingFor(tiledAnchor, rowTiles, loops);
    SmallVector<int64_t> oneRow(rank, 1), reductionTile(rank, 0);
    oneRow.back() = 0;
    reductionTile.back() = vec;
    SmallVector<int64_t> fillTiles(rank - 1, 1);
    for (auto [op, handle] : llvm::zip(producers, handles)) {
      if (isa<linalg::FillOp>(op)) {
        w.tileUsingFor(handle, fillTiles, loops);
        continue;
      }
      w.tileReductionUsingFor(w.tileUsingFor(handle, oneRow, loops),
                              reductionTile);
    }
    w.vectorizeFunction(
        {"vector.lower_multi_reduction lowering_strategy = \"innerreduction\"",
         "canonicalization", "tensor.fold_tensor_empty"});
    // What the elementwise op computes from a row's reductions alone (layer
    // norm's 1 / sqrt(var + eps)) out of the loop over the row: LLVM cannot
    // hoist it once it is memory (the row's results might alias the
    // output), and a square root per vector took RMS norm's time from 4.7
    // to 7-10 ms.
    std::string allLoops = w.fresh("loops");
    w.line(allLoops + " = transform.structured.match ops{[\"scf.for\"]} in "
                   "%root : (!transform.any_op) -> !transform.any_op");
    w.line("transform.apply_licm to " + allLoops + " : !transform.any_op");
    return w.finish();
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    RankedTensorType type = getRowsType(anchor);
    LoopNestDescription d;
    d.ranges.assign(type.getShape().begin(), type.getShape().end());
    d.reduction.assign(type.getRank(), false);
    d.reduction.back() = true;
    // Each part runs this nest in turn: blocks of rows across threads, then
    // pieces of one row.
    SmallVector<int64_t> rows(type.getRank(), 0);
    rows[0] = knobs.get("forall.d0", 1);
    d.addLevel(TileLevelRole::Threads, rows, /*parallel=*/true);
    SmallVector<int64_t> rowTiles(type.getRank(), 1);
    rowTiles.back() = knobs.get("vec", 16);
    d.addLevel(TileLevelRole::Register, rowTiles, /*parallel=*/false);
    d.threads = knobs.get("threads", 1);
    d.vectorLoop = type.getRank() - 1;
    d.vectorWidth = rowTiles.back();
    return d;
  }
};

} // namespace

const SketchRule &ke::getCpuRowsRule() {
  static const CpuRowsRule rule;
  return rule;
}

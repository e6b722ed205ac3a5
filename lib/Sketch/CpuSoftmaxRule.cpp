//===- CpuSoftmaxRule.cpp - Softmax on CPU --------------------------------===//
//
// linalg.softmax is not a structured op: the sketch decomposes it into its
// max, subtract-exp, sum and divide generics, tiles each over the leading
// (non-softmax) dimensions into scf.forall loops that run on `threads`
// OpenMP threads, and vectorizes the row computations.
//
//===----------------------------------------------------------------------===//

#include "CpuRules.h"
#include "CpuSupport.h"
#include "ScriptWriter.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ke;

namespace {

/// The tile sizes of an assignment, shared by the script and the loop-nest
/// description so that they cannot disagree.
struct SoftmaxSizes {
  /// tile_using_forall of each part: rows of the leading dimension.
  int64_t rows = 1;
  /// tile_using_for of each generic: one row, `vec` softmax elements.
  SmallVector<int64_t> rowTiles;
  /// tile_using_for of each fill (no softmax dimension): one element.
  SmallVector<int64_t> fillTiles;
};

SoftmaxSizes getSoftmaxSizes(RankedTensorType type,
                             const KnobAssignment &knobs) {
  int64_t rank = type.getRank();
  SoftmaxSizes s;
  s.rows = knobs.get("forall.d0", 1);
  s.rowTiles.assign(rank, 1);
  s.rowTiles.back() = knobs.get("vec", 16);
  s.fillTiles.assign(rank - 1, 1);
  return s;
}

class CpuSoftmaxRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "cpu.softmax"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    // Rows are tiled over the leading dimensions: the softmax dimension must
    // be the last one.
    return target.isCpu() && getLastDimSoftmaxType(anchor);
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    auto type = cast<RankedTensorType>(
        cast<linalg::SoftmaxOp>(anchor).getInput().getType());
    // The input rows, the exponentials and the results.
    return makeRowKnobs(type, target, /*buffersPerRow=*/3);
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    ScriptWriter w;
    w.comment("sketch cpu.softmax: " + knobs.str());
    std::string softmax = w.match("linalg.softmax"), parts = w.fresh("parts");
    w.comment("max, subtract-exp, sum and divide as linalg.generic + fill");
    w.line(llvm::formatv("{0} = transform.structured.decompose_interface {1} "
                         ": (!transform.any_op) -> !transform.any_op",
                         parts, softmax));
    // The exponentials are decomposed into the softmax's output, as the
    // divide is: in one loop over row blocks they would share its block,
    // and bufferization would copy the output block into a buffer of their
    // own on every iteration. They write every element and read none.
    w.comment("the exponentials into a tensor of their own, not the output");
    std::string func = w.match("func.func");
    w.line(llvm::formatv("{0} = transform.apply_registered_pass "
                         "\"ke-fresh-unread-inits\" to {1} : "
                         "(!transform.any_op) -> !transform.any_op",
                         w.fresh("func"), func));
    // The divide (the last part, which decompose_interface returns) is
    // tiled into rows across threads and the other parts are fused into
    // that loop, so that a thread's intermediates (the row max, the
    // exponentials, the row sum) are its own rows only, never whole
    // tensors (which cost more than the arithmetic at small sizes: fresh
    // pages on every call). Then each part is tiled into one row of `vec`
    // elements at a time.
    auto type = cast<RankedTensorType>(
        cast<linalg::SoftmaxOp>(anchor).getInput().getType());
    int64_t rank = type.getRank();
    SoftmaxSizes sizes = getSoftmaxSizes(type, knobs);
    SmallVector<std::string> iterators(rank, "#linalg.iterator_type<parallel>");
    auto matchGenerics = [&](bool reduction) {
      iterators.back() = reduction ? "#linalg.iterator_type<reduction>"
                                   : "#linalg.iterator_type<parallel>";
      std::string all = w.fresh(reduction ? "reductions" : "elementwise");
      w.line(llvm::formatv("{0} = transform.structured.match "
                           "ops{{[\"linalg.generic\"]} attributes "
                           "{{iterator_types = [{1}]} in %root : "
                           "(!transform.any_op) -> !transform.any_op",
                           all, llvm::join(iterators, ", ")));
      return all;
    };
    auto split = [&](const std::string &all, llvm::StringRef stem) {
      return w.splitHandle(all, 2, stem);
    };
    w.comment("the parts in order: max, exp, sum, divide and their fills");
    SmallVector<std::string> reductions = split(matchGenerics(true), "red");
    SmallVector<std::string> elementwise = split(matchGenerics(false), "ew");
    SmallVector<std::string> fills = split(w.match("linalg.fill"), "fill");
    w.comment("rows across threads: the divide's, the rest fused into them");
    std::string forall = w.fresh("forall"), divide = w.fresh("divide");
    w.line(llvm::formatv("{0}, {1} = transform.structured.tile_using_forall "
                         "{2} tile_sizes [{3}] : (!transform.any_op) -> "
                         "(!transform.any_op, !transform.any_op)",
                         divide, forall, elementwise[1], sizes.rows));
    // Producers before their producers: each is used in the loop by then.
    std::string producers[] = {reductions[1], fills[1], elementwise[0],
                               reductions[0], fills[0]};
    SmallVector<std::string> fused;
    for (const std::string &producer : producers) {
      std::string op = w.fresh("fused"), loop = w.fresh("forall");
      w.line(llvm::formatv("{0}, {1} = transform.structured."
                           "fuse_into_containing_op {2} into {3} : "
                           "(!transform.any_op, !transform.any_op) -> "
                           "(!transform.any_op, !transform.any_op)",
                           op, loop, producer, forall));
      forall = loop;
      fused.push_back(op);
    }
    w.comment("one row at a time: elementwise parts in `vec` pieces; the max "
              "and the sum carry `vec` partial results across the row and "
              "combine them once");
    auto tileFor = [&](const std::string &op, ArrayRef<int64_t> tiles) {
      std::string loops, types = "!transform.any_op";
      for (int64_t t : tiles)
        if (t) {
          loops += ", " + w.fresh("loop");
          types += ", !transform.any_op";
        }
      std::string tiled = w.fresh("tiled");
      w.line(llvm::formatv("{0}{1} = transform.structured.tile_using_for {2} "
                           "tile_sizes {3} : (!transform.any_op) -> ({4})",
                           tiled, loops, op, ScriptWriter::list(tiles),
                           types));
      return tiled;
    };
    tileFor(divide, sizes.rowTiles);
    tileFor(fused[2], sizes.rowTiles);
    SmallVector<int64_t> oneRow(rank - 1, 1), reductionTile(rank, 0);
    oneRow.push_back(0);
    reductionTile.back() = sizes.rowTiles.back();
    for (const std::string &reduction : {fused[0], fused[3]}) {
      w.tileReductionUsingFor(tileFor(reduction, oneRow), reductionTile);
    }
    if (rank > 1)
      for (const std::string &fill : {fused[1], fused[4]})
        tileFor(fill, sizes.fillTiles);
    // fold_tensor_empty: the exponentials' block becomes a tensor.empty of
    // the block's size in the loop, not a slice of a whole-tensor buffer.
    w.vectorizeFunction(
        {"vector.lower_multi_reduction lowering_strategy = \"innerreduction\"",
         "canonicalization", "tensor.fold_tensor_empty"});
    return w.finish();
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    auto type = cast<RankedTensorType>(
        cast<linalg::SoftmaxOp>(anchor).getInput().getType());
    SoftmaxSizes sizes = getSoftmaxSizes(type, knobs);
    LoopNestDescription d;
    d.ranges.assign(type.getShape().begin(), type.getShape().end());
    d.reduction.assign(type.getRank(), false);
    d.reduction.back() = true;
    // Each part runs this nest in turn: rows across threads, then pieces of
    // one row. Partial pieces are neither peeled nor padded.
    SmallVector<int64_t> rows(type.getRank(), 0);
    rows[0] = sizes.rows;
    d.addLevel(TileLevelRole::Threads, rows, /*parallel=*/true);
    d.addLevel(TileLevelRole::Register, sizes.rowTiles, /*parallel=*/false);
    d.threads = knobs.get("threads", 1);
    d.vectorLoop = type.getRank() - 1;
    d.vectorWidth = d.levels.back().tile.back();
    return d;
  }
};

} // namespace

const SketchRule &ke::getCpuSoftmaxRule() {
  static const CpuSoftmaxRule rule;
  return rule;
}

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
    unsigned cores = std::max(1u, target.cpu.cores);
    KnobSpace space;
    bool parallelByDefault =
        cores > 1 && type.getNumElements() >= (int64_t(1) << 16);
    space.knobs.push_back(makeThreadsKnob(cores, parallelByDefault));
    int64_t rows = type.getDimSize(0);
    Knob tile{"forall.d0", tileCandidates(rows, rows), 0};
    tile.defaultIndex = nearestChoice(
        tile.choices, parallelByDefault ? llvm::divideCeil(rows, cores) : rows);
    space.knobs.push_back(tile);
    // Elements of a row handled at once: one to four vectors.
    int64_t cols = type.getShape().back();
    unsigned lanes = std::max(1u, target.cpu.vectorBits /
                                      std::max(8u, type.getElementTypeBitWidth()));
    Knob vec{"vec", {}, 0};
    for (int64_t v : tileCandidates(cols, 4 * lanes))
      if (v >= std::min<int64_t>(cols, 4))
        vec.choices.push_back(v);
    vec.defaultIndex = nearestChoice(vec.choices, lanes);
    space.knobs.push_back(vec);
    return space;
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
    // Each part is tiled into rows across threads, then into one row of
    // `vec` elements at a time (a reduction part loops over its row), so the
    // vectorizer sees vector-sized tiles, never whole rows of a big tensor.
    auto type = cast<RankedTensorType>(
        cast<linalg::SoftmaxOp>(anchor).getInput().getType());
    int64_t rank = type.getRank();
    SoftmaxSizes sizes = getSoftmaxSizes(type, knobs);
    w.comment("rows across threads, then vector-sized pieces of a row");
    auto tileParts = [&](llvm::StringRef opName, ArrayRef<int64_t> inner) {
      std::string parts = w.match(opName);
      w.line("transform.foreach " + parts + " : !transform.any_op {");
      w.line("^bb0(%part: !transform.any_op):");
      w.line(llvm::formatv("  %rows, %forall = transform.structured."
                           "tile_using_forall %part tile_sizes [{0}] : "
                           "(!transform.any_op) -> (!transform.any_op, "
                           "!transform.any_op)",
                           sizes.rows));
      std::string types = "!transform.any_op";
      SmallVector<std::string> loops;
      for (size_t i = 0; i < inner.size(); ++i) {
        loops.push_back("%l" + std::to_string(i));
        types += ", !transform.any_op";
      }
      w.line(llvm::formatv("  %piece, {0} = transform.structured."
                           "tile_using_for %rows tile_sizes {1} : "
                           "(!transform.any_op) -> ({2})",
                           llvm::join(loops, ", "), ScriptWriter::list(inner),
                           types));
      w.line("}");
    };
    tileParts("linalg.generic", sizes.rowTiles);
    if (rank > 1)
      tileParts("linalg.fill", sizes.fillTiles);
    w.vectorizeFunction(
        {"vector.lower_multi_reduction lowering_strategy = \"innerreduction\"",
         "canonicalization"});
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

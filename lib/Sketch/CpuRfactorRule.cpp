//===- CpuRfactorRule.cpp - Split reductions across threads (rfactor) -----===//
//
// Ansor's rfactor for CPUs: a reduction with few (or no) parallel iterations
// cannot use the threads by tiling its parallel loops, so the innermost
// reduction loop is split into `split` partial reductions that run in an
// scf.forall on `threads` OpenMP threads, followed by a small combining
// reduction (transform.structured.tile_reduction_using_forall). Each partial
// reduction is tiled for vectors (`kvec`, and `reg` on the innermost parallel
// loop), peeled where tiles are partial, and vectorized. Only for reductions
// with few rows (kMaxCombineElements): the combine is vectorized whole.
//
//===----------------------------------------------------------------------===//

#include "CpuRules.h"
#include "CpuSupport.h"
#include "ScriptWriter.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ke;

namespace {

/// A body that combines the input with the accumulator by one operation
/// whose neutral element MLIR knows, then yields.
bool hasSimpleCombiner(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body || body->getOperations().size() != 2)
    return false;
  Operation &combiner = body->front();
  return isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
             arith::MaxNumFOp, arith::MinNumFOp, arith::AddIOp, arith::MulIOp,
             arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp,
             arith::AndIOp, arith::OrIOp, arith::XOrIOp>(combiner) &&
         llvm::is_contained(combiner.getOperands(),
                            body->getArguments().back());
}

/// The sizes of an assignment, shared by the script and the loop-nest
/// description so that they cannot disagree.
struct RfactorSizes {
  /// The reduction loop (the innermost).
  unsigned k = 0;
  int64_t split = 2, kvec = 1, reg = 0;
  /// num_threads of tile_reduction_using_forall: `split` on k, else 0.
  SmallVector<int64_t> threads;
  /// Vector tiles of each partial reduction: `reg` rows of the innermost
  /// parallel loop (1 on the others), `kvec` elements of the reduction.
  SmallVector<int64_t> tiles;
  /// Whether the reduction and row loops of a partial reduction are peeled.
  bool peelReduction = false, peelRows = false;
};

RfactorSizes getRfactorSizes(ArrayRef<int64_t> ranges,
                             const KnobAssignment &knobs) {
  RfactorSizes s;
  s.k = ranges.size() - 1;
  unsigned k = s.k;
  s.split = knobs.get(loopKnobName("split", k), 2);
  s.kvec = knobs.get(loopKnobName("kvec", k), 1);
  s.reg = k > 0 ? knobs.get(loopKnobName("reg", k - 1), 1) : 0;
  s.threads.assign(ranges.size(), 0);
  s.threads[k] = s.split;
  s.tiles.assign(ranges.size(), 1);
  if (k > 0)
    s.tiles[k - 1] = s.reg;
  s.tiles[k] = s.kvec;
  // A chunk has ranges[k] / split iterations (one more in some chunks when
  // split does not divide); peel when kvec leaves partial tiles.
  int64_t chunk = ranges[k] / s.split;
  bool chunksEven = ranges[k] % s.split == 0;
  s.peelReduction = s.kvec < chunk && (!chunksEven || chunk % s.kvec != 0);
  s.peelRows = k > 0 && s.reg < ranges[k - 1] && ranges[k - 1] % s.reg != 0;
  return s;
}

/// The partial results' fill and the combine are vectorized whole, one
/// vector of (parallel iterations x split) elements each: beyond this many,
/// the straight-line code takes LLVM minutes to compile (4096 rows split in
/// 2 timed every candidate out at 60 s, 2026-11-27). Reductions with that
/// many rows use the threads on the rows instead (cpu.tile).
constexpr int64_t kMaxCombineElements = 1024;

/// The iterations of the parallel loops (all but the innermost reduction).
int64_t getParallelIterations(ArrayRef<int64_t> ranges) {
  int64_t iterations = 1;
  for (int64_t range : ranges.drop_back())
    iterations *= range;
  return iterations;
}

class CpuRfactorRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "cpu.rfactor"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    auto op = dyn_cast<linalg::LinalgOp>(anchor);
    if (!target.isCpu() || target.cpu.cores < 2 || !op ||
        !op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
        op.getNumReductionLoops() != 1 || !hasSimpleCombiner(op))
      return false;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    return llvm::none_of(ranges, ShapedType::isDynamic) &&
           iterators.back() == utils::IteratorType::reduction &&
           ranges.back() >= 64 &&
           2 * getParallelIterations(ranges) <= kMaxCombineElements;
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    auto op = cast<linalg::LinalgOp>(anchor);
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    unsigned k = ranges.size() - 1;
    unsigned cores = std::max(1u, target.cpu.cores);
    KnobSpace space;
    space.knobs.push_back(makeThreadsKnob(cores, /*parallelByDefault=*/true));
    Knob split{loopKnobName("split", k), {}, 0};
    // The combine of (parallel iterations x split) partial results is
    // vectorized whole: no more than kMaxCombineElements of them.
    int64_t maxSplit = std::min<int64_t>(
        {ranges[k] / 2, 8 * cores,
         kMaxCombineElements / getParallelIterations(ranges)});
    for (int64_t s = 2; s <= maxSplit; s *= 2)
      split.choices.push_back(s);
    split.defaultIndex = llvm::find(split.choices,
                                    int64_t(llvm::PowerOf2Ceil(cores))) -
                         split.choices.begin();
    if (split.defaultIndex >= split.choices.size())
      split.defaultIndex = 0;
    space.knobs.push_back(split);
    if (k > 0) {
      Knob reg{loopKnobName("reg", k - 1), tileCandidates(ranges[k - 1], 16),
               0};
      space.knobs.push_back(reg);
    }
    Knob kvec{loopKnobName("kvec", k), tileCandidates(ranges[k] / 2, 64), 0};
    unsigned lanes = target.cpu.vectorBits / 32;
    kvec.defaultIndex = nearestChoice(kvec.choices, lanes);
    space.knobs.push_back(kvec);
    return space;
  }

  LogicalResult checkLimits(Operation *anchor, const TargetDescription &target,
                            const KnobAssignment &knobs,
                            std::string &reason) const override {
    auto op = cast<linalg::LinalgOp>(anchor);
    unsigned k = op.getNumLoops() - 1;
    int64_t work = knobs.get(loopKnobName("kvec", k), 1) *
                   (k > 0 ? knobs.get(loopKnobName("reg", k - 1), 1) : 1);
    if (work > 1024) {
      reason = llvm::formatv("innermost tile of {0} elements is too much "
                             "straight-line code (limit 1024)",
                             work);
      return failure();
    }
    int64_t combine = getParallelIterations(op.getStaticLoopRanges()) *
                      knobs.get(loopKnobName("split", k), 2);
    if (combine > kMaxCombineElements) {
      reason = llvm::formatv("the combine of {0} partial results is "
                             "vectorized whole (limit {1})",
                             combine, kMaxCombineElements);
      return failure();
    }
    return success();
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    auto op = cast<linalg::LinalgOp>(anchor);
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    RfactorSizes sizes = getRfactorSizes(ranges, knobs);
    unsigned k = sizes.k;

    ScriptWriter w;
    w.comment("sketch cpu.rfactor: " + knobs.str());
    std::string target0 = w.match(anchor->getName().getStringRef(), kAnchorAttr);
    w.comment("R: `split` partial reductions in parallel, then one combine");
    auto [fill, partial, combine, forall] =
        w.tileReductionUsingForall(target0, sizes.threads);

    w.comment("S/R: vector tiles of each partial reduction");
    SmallVector<std::string> loops;
    w.tileUsingFor(partial, sizes.tiles, loops);
    if (sizes.peelReduction)
      w.peel(loops[k]);
    if (sizes.peelRows)
      w.peel(loops[k - 1]);
    w.comment("vectorize the partial reductions and the combine");
    w.vectorizeFunction(
        {"vector.lower_multi_reduction lowering_strategy = \"innerreduction\"",
         "vector.lower_contraction lowering_strategy = \"outerproduct\"",
         "vector.transfer_permutation_patterns", "canonicalization"});
    return w.finish();
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    auto op = cast<linalg::LinalgOp>(anchor);
    LoopNestDescription d;
    d.ranges = op.getStaticLoopRanges();
    RfactorSizes sizes = getRfactorSizes(d.ranges, knobs);
    for (utils::IteratorType type : op.getIteratorTypesArray())
      d.reduction.push_back(type == utils::IteratorType::reduction);
    // num_threads = split: chunks of ceil(range / split) reduction elements.
    SmallVector<int64_t> chunks(d.ranges.size(), 0);
    chunks[sizes.k] = llvm::divideCeil(d.ranges[sizes.k], sizes.split);
    d.addLevel(TileLevelRole::Threads, chunks, /*parallel=*/true);
    d.addLevel(TileLevelRole::Register, sizes.tiles, /*parallel=*/false);
    d.threads = knobs.get("threads", 1);
    if (sizes.peelReduction || sizes.peelRows)
      d.partialTiles = PartialTileHandling::Peeled;
    // Multi-reductions lower to inner reductions: vectors along k.
    d.vectorLoop = sizes.k;
    d.vectorWidth = d.levels.back().tile[sizes.k];
    return d;
  }
};

} // namespace

const SketchRule &ke::getCpuRfactorRule() {
  static const CpuRfactorRule rule;
  return rule;
}

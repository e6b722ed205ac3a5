//===- GpuReduceRule.cpp - Reductions across the threads of a block -------===//
//
// gpu.reduce: reductions, and contractions shaped like a matrix-vector
// product (isMatrixVectorLike). Rows (the parallel loops) map to blocks,
// `block` rows each;
// the innermost reduction loop is split across the block's `threads`
// threads (transform.structured.tile_reduction_using_forall mapped to
// #gpu.thread<x>): each thread reduces its chunk, `kvec` elements at a time
// in vector registers, into a partial result in shared memory; after a
// barrier one thread per row combines the partials (the GPU lowering turns
// that combine into a block-wide gpu.all_reduce: warp shuffles, see
// lib/Codegen/GpuReductions.h). A fused consumer (a mean's scaling) is
// tiled with the rows and applied by the combining thread after the
// combine. The thread count is a multiple of the target's warp (wavefront)
// size. The body may compute before it combines (`acc + x*x`, a variance):
// the threads run the whole body, the combine uses the combining op alone.
//
//===----------------------------------------------------------------------===//

#include "GpuRules.h"
#include "GpuSupport.h"

#include "ke/Workload/Kernel.h"
#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ke;

namespace {

struct ReduceSizes {
  unsigned k = 0;
  int64_t rows = 1, threads = 32, kvec = 1;
  /// Block tiles by anchor loop: `rows` on the innermost mapped loop, 1 on
  /// the other mapped loops, 0 on the reduction.
  SmallVector<int64_t> block;
};

ReduceSizes getReduceSizes(const GpuLoops &loops, const KnobAssignment &knobs,
                           const TargetDescription &target) {
  ReduceSizes s;
  s.k = loops.ranges.size() - 1;
  s.block.assign(loops.ranges.size(), 0);
  for (unsigned loop : loops.mapped)
    s.block[loop] = 1;
  unsigned rowLoop = loops.mapped.back();
  s.rows = std::min(knobs.get(loopKnobName("block", rowLoop), 1),
                    loops.ranges[rowLoop]);
  s.block[rowLoop] = s.rows;
  s.threads = knobs.get("threads", target.gpu.warpSize);
  s.kvec = knobs.get(loopKnobName("kvec", s.k), 1);
  return s;
}

struct GlobalSizes {
  int64_t n = 0, blocks = 1, chunk = 0, threads = 32, kvec = 1;
};

/// A reduction of everything to one value (a 0-d result, one loop).
bool isGlobal(linalg::LinalgOp op) {
  return op.getNumLoops() == 1 && op.getNumDpsInits() == 1 &&
         op.getRank(op.getDpsInitOperand(0)) == 0;
}

/// Elements of a global reduction's vector loads: 16 bytes of its result
/// type.
int64_t getGlobalVector(linalg::LinalgOp op) {
  Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  return vectorElements(
      std::max(8u, element.isIntOrFloat() ? element.getIntOrFloatBitWidth()
                                          : 32u));
}

/// Numbers of blocks (partial results) for a global reduction of `n`
/// elements: powers of two from two warps to 4096, dividing `n`, each
/// block's chunk at least 16 warps of elements. A reduction too short for
/// any of them (under 32 K elements with a warp of 32) gets 2 to 32 blocks
/// instead, each chunk a multiple of a warp of `vector`-element vectors (so
/// that the default threads and kvec split it) and at least two warps:
/// before, it fell to gpu.elementwise's sum in one thread (the small
/// suite's 4096 elements took 42 us on an H200, PyTorch 7 us;
/// 2026-11-29). Shorter ones still do.
SmallVector<int64_t> getGlobalBlockChoices(int64_t n, int64_t vector,
                                           const TargetDescription &target) {
  SmallVector<int64_t> choices;
  int64_t warp = target.gpu.warpSize;
  for (int64_t b = 2 * warp; b <= 4096; b *= 2)
    if (n % b == 0 && n / b >= 16 * warp)
      choices.push_back(b);
  if (!choices.empty())
    return choices;
  for (int64_t b = 2; b < 2 * warp; b *= 2)
    if (n % b == 0 && (n / b) % (warp * vector) == 0 && n / b >= 2 * warp)
      choices.push_back(b);
  return choices;
}

GlobalSizes getGlobalSizes(linalg::LinalgOp op, const KnobAssignment &knobs,
                           const TargetDescription &target) {
  GlobalSizes g;
  g.n = op.getStaticLoopRanges()[0];
  g.blocks = knobs.get("blocks", 2 * target.gpu.warpSize);
  g.chunk = g.n / g.blocks;
  g.threads = knobs.get("threads", target.gpu.warpSize);
  g.kvec = knobs.get(loopKnobName("kvec", 0), 1);
  return g;
}

KnobSpace getGlobalKnobSpace(linalg::LinalgOp op,
                             const TargetDescription &target) {
  int64_t n = op.getStaticLoopRanges()[0];
  int64_t warp = target.gpu.warpSize;
  int64_t vector = getGlobalVector(op);
  KnobSpace space;
  Knob blocks{"blocks", getGlobalBlockChoices(n, vector, target), 0};
  // About a thousand blocks fill an H100/H200 several times over.
  blocks.defaultIndex = nearestChoice(blocks.choices, 1024);
  int64_t chunk = n / blocks.choices[blocks.defaultIndex];
  space.knobs.push_back(blocks);
  Knob threads{"threads", {}, 0};
  for (int64_t t = warp; t <= std::min<int64_t>(target.gpu.maxThreadsPerBlock,
                                                 chunk);
       t *= 2)
    threads.choices.push_back(t);
  threads.defaultIndex = nearestChoice(
      threads.choices, std::min<int64_t>(8 * warp, chunk / (4 * vector)));
  space.knobs.push_back(threads);
  Knob kvec{loopKnobName("kvec", 0), {1, 2, 4, 8, 16}, 0};
  kvec.defaultIndex = nearestChoice(kvec.choices, vector);
  space.knobs.push_back(kvec);
  return space;
}

/// Launch 1: split_reduction makes [blocks, chunk] partial reductions into
/// a [blocks] buffer (bufferized as a host allocation: a scratch buffer of
/// the runner), reduced like rows (a row per block, its threads combined
/// with shuffles). The result-combining op [blocks] -> [] stays on the
/// host; the GPU lowering puts it in launch 2, one block reducing the
/// partials (launchHostCombines, lib/Codegen/GpuReductions.h). The order of
/// every sum is fixed: the result is deterministic.
std::string emitGlobalScript(linalg::LinalgOp op,
                             const TargetDescription &target,
                             const KnobAssignment &knobs) {
  GlobalSizes g = getGlobalSizes(op, knobs, target);
  ScriptWriter w;
  w.comment("sketch gpu.reduce (global): " + knobs.str());
  std::string anchor =
      w.match(op->getName().getStringRef(), kAnchorAttr);
  std::string init = w.fresh("init"), fill = w.fresh("fill"),
              split = w.fresh("split"), result = w.fresh("combine");
  w.comment("launch 1: a partial result per block (split_reduction)");
  w.line(llvm::formatv(
      "{0}, {1}, {2}, {3} = transform.structured.split_reduction {4} "
      "{{split_factor = {5}, insert_split_dimension = 0} : "
      "(!transform.any_op) -> (!transform.any_op, !transform.any_op, "
      "!transform.any_op, !transform.any_op)",
      init, fill, split, result, anchor, g.blocks));
  std::string forall;
  split = tileUsingForallMapped(w, split, {1, 0}, "[#gpu.block<x>]", forall);
  w.fuseInto(fill, forall);
  auto [rfill, partial, combine, threads] = w.tileReductionUsingForall(
      split, {0, g.threads}, "[#gpu.thread<x>]");
  std::string fillForall, combineForall, fillThread;
  tileUsingForallMapped(w, rfill, {0, 1}, "[#gpu.thread<x>]", fillForall);
  w.bufferizeDestination(fillForall, kWorkgroup);
  tileUsingForallMapped(w, combine, {1, 0}, "[#gpu.thread<x>]",
                        combineForall);
  tileUsingForallMapped(w, fill, {1}, "[#gpu.thread<x>]", fillThread);
  SmallVector<std::string> innerLoops;
  w.tileUsingFor(partial, {1, g.kvec}, innerLoops);
  w.comment("launch 2 (made by the GPU lowering): one block combines the "
            "partial results");
  emitGpuEpilogue(w, {g.threads, 1, 1}, /*mapToBlocks=*/true);
  return w.finish();
}

/// A contraction shaped like a matrix-vector product: few outputs (at most
/// 65536), a long innermost reduction (at least 1024) that every input
/// reads contiguously (its last non-unit dimension). Tiled over threads
/// like a matrix product, each output would be one thread's sequential sum
/// of the whole reduction: few threads, and a float sum of a million terms
/// off by about 2e-4 relative (KernelBench's matrix-vector product, K = 2^20,
/// failed its 1e-4 check); split over a block's threads, the partial sums are
/// short and combined as a tree.
bool isMatrixVectorLike(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic) ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return false;
  unsigned k = ranges.size() - 1;
  int64_t outputs = 1;
  for (unsigned loop = 0; loop < k; ++loop)
    outputs *= ranges[loop];
  if (outputs > 65536 || ranges[k] < 1024)
    return false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<ShapedType>(input->get().getType());
    if (!type)
      return false;
    AffineMap map = op.getMatchingIndexingMap(input);
    bool contiguous = false;
    for (unsigned d = map.getNumResults(); d-- > 0;) {
      if (type.getDimSize(d) == 1)
        continue;
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(d));
      contiguous = dim && dim.getPosition() == k;
      break;
    }
    if (!contiguous)
      return false;
  }
  return true;
}

class GpuReduceRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "gpu.reduce"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    auto op = dyn_cast<linalg::LinalgOp>(anchor);
    if (!target.isGpu() || !op || !op.hasPureTensorSemantics() ||
        op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1 ||
        !getReductionCombiner(op))
      return false;
    WorkloadKind kind = classifyWorkload(op);
    if (kind != WorkloadKind::Reduction &&
        !(kind == WorkloadKind::Contraction && isMatrixVectorLike(op)))
      return false;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return false;
    if (isGlobal(op))
      return !getGlobalBlockChoices(ranges[0], getGlobalVector(op), target)
                  .empty();
    // The reduction must be the innermost loop, long enough to split over a
    // warp, and there must be rows for the blocks.
    GpuLoops loops = analyzeGpuLoops(op);
    return op.getIteratorTypesArray().back() == utils::IteratorType::reduction &&
           ranges.back() >= 2 * int64_t(target.gpu.warpSize) &&
           !loops.mapped.empty();
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    if (isGlobal(cast<linalg::LinalgOp>(anchor)))
      return getGlobalKnobSpace(cast<linalg::LinalgOp>(anchor), target);
    GpuLoops loops = analyzeGpuLoops(cast<linalg::LinalgOp>(anchor));
    int64_t k = loops.ranges.back();
    unsigned rowLoop = loops.mapped.back();
    KnobSpace space;
    Knob rows{loopKnobName("block", rowLoop),
              tileCandidates(loops.ranges[rowLoop], 8), 0};
    space.knobs.push_back(rows);
    Knob threads{"threads", {}, 0};
    int64_t warp = target.gpu.warpSize;
    for (int64_t t = warp;
         t <= std::min<int64_t>(target.gpu.maxThreadsPerBlock, k); t *= 2)
      threads.choices.push_back(t);
    // A few vectors per thread by default, at most eight warps.
    int64_t vector = vectorElements(loops.elementBits);
    threads.defaultIndex = nearestChoice(
        threads.choices, std::min<int64_t>(8 * warp, k / (2 * vector)));
    if (threads.choices[threads.defaultIndex] > k / (2 * vector) &&
        threads.defaultIndex > 0)
      --threads.defaultIndex;
    space.knobs.push_back(threads);
    Knob kvec{loopKnobName("kvec", loops.ranges.size() - 1),
              tileCandidates(k / warp, 16), 0};
    kvec.defaultIndex = nearestChoice(kvec.choices, vector);
    space.knobs.push_back(kvec);
    return space;
  }

  LogicalResult checkLimits(Operation *anchor, const TargetDescription &target,
                            const KnobAssignment &knobs,
                            std::string &reason) const override {
    if (isGlobal(cast<linalg::LinalgOp>(anchor))) {
      GlobalSizes g = getGlobalSizes(cast<linalg::LinalgOp>(anchor), knobs,
                                     target);
      if (g.chunk % (g.threads * g.kvec) != 0) {
        reason = "a block's chunk does not split evenly over its threads";
        return failure();
      }
      return checkBlockLimits(target, {g.threads, 1, 1}, g.kvec + 24, reason);
    }
    GpuLoops loops = analyzeGpuLoops(cast<linalg::LinalgOp>(anchor));
    ReduceSizes s = getReduceSizes(loops, knobs, target);
    if (s.rows > s.threads) {
      reason = "more rows per block than threads to combine them";
      return failure();
    }
    int64_t bytes = s.rows * s.threads * std::max(4u, loops.elementBits / 8);
    if (uint64_t(bytes) > staticSharedMemoryLimit(target)) {
      reason = llvm::formatv("{0} bytes of partial results exceed the static "
                             "shared memory",
                             bytes);
      return failure();
    }
    return checkBlockLimits(target, {s.threads, 1, 1},
                            s.rows * s.kvec + 24, reason);
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    auto op = cast<linalg::LinalgOp>(anchor);
    if (isGlobal(op))
      return emitGlobalScript(op, target, knobs);
    GpuLoops loops = analyzeGpuLoops(op);
    ReduceSizes s = getReduceSizes(loops, knobs, target);
    unsigned n = loops.ranges.size();
    ScriptWriter w;
    w.comment("sketch gpu.reduce: " + knobs.str());
    KernelHandles kernel = matchKernel(w, anchor);
    std::string current = kernel.anchor, consumer = kernel.consumer,
                producers = kernel.producers;
    const KernelNeighbours &neighbours = kernel.neighbours;
    bool hasProducers = neighbours.hasProducers;
    std::string forall;
    if (neighbours.consumer) {
      // The consumer belongs in the launch too: tiled on its own it would
      // stay on the host (where nothing runs it), and it must see combined
      // rows, not the threads' partial results.
      w.comment("S: rows per block of the consumer, the anchor fused into "
                "them");
      SmallVector<unsigned> tiled;
      SmallVector<int64_t> tiles = mapToResult(op, s.block, &tiled);
      consumer = tileUsingForallMapped(w, consumer, tiles,
                                       mappingList("block", loops, tiled),
                                       forall);
      w.fuseInto(current, forall);
    } else {
      w.comment("S: rows per block");
      current = tileUsingForallMapped(
          w, current, s.block, mappingList("block", loops, loops.mapped),
          forall);
    }
    if (hasProducers)
      w.fuseInto(producers, forall);

    w.comment("R: the reduction split across the block's threads");
    SmallVector<int64_t> numThreads(n, 0);
    numThreads[s.k] = s.threads;
    auto [fill, partial, combine, threads] = w.tileReductionUsingForall(
        current, numThreads, "[#gpu.thread<x>]");
    // The partial results: [rows..., threads], one column per thread, each
    // initialized by its own thread (no race with the others' writes), in
    // shared memory so that the combining threads read them.
    // The partial results have the anchor's rank: [rows..., threads].
    SmallVector<int64_t> column(n, 0);
    column.back() = 1;
    std::string fillForall;
    tileUsingForallMapped(w, fill, column, "[#gpu.thread<x>]", fillForall);
    w.bufferizeDestination(fillForall, kWorkgroup);
    // One thread per row combines (and, before, initializes) the output.
    SmallVector<unsigned> rowLoops;
    SmallVector<int64_t> rowTiles = mapToResult(op, rowTilesOf(loops), &rowLoops);
    std::string combineForall;
    SmallVector<int64_t> combineTiles = rowTiles;
    combineTiles.push_back(0);
    if (neighbours.consumer) {
      // The consumer applies to each row after its combine: one thread per
      // row of the consumer, the combine fused into it.
      w.comment("one thread per row combines the partial results and "
                "applies the consumer");
      tileUsingForallMapped(w, consumer, rowTiles, "[#gpu.thread<x>]",
                            combineForall);
      w.fuseInto(combine, combineForall);
    } else {
      w.comment("one thread per row combines the partial results");
      tileUsingForallMapped(w, combine, combineTiles, "[#gpu.thread<x>]",
                            combineForall);
    }
    if (hasProducers) {
      std::string producerForall;
      tileUsingForallMapped(w, producers, rowTiles, "[#gpu.thread<x>]",
                            producerForall);
    }
    w.comment("each thread's chunk, kvec elements at a time");
    SmallVector<int64_t> inner(n, 0);
    inner[s.k] = s.kvec;
    for (unsigned loop : loops.mapped)
      inner[loop] = 1;
    SmallVector<std::string> innerLoops;
    w.tileUsingFor(partial, inner, innerLoops);
    emitGpuEpilogue(w, {s.threads, 1, 1}, /*mapToBlocks=*/true);
    return w.finish();
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    if (isGlobal(cast<linalg::LinalgOp>(anchor))) {
      GlobalSizes g = getGlobalSizes(cast<linalg::LinalgOp>(anchor), knobs,
                                     target);
      LoopNestDescription d;
      d.ranges = {g.n};
      d.reduction = {true};
      d.addLevel(TileLevelRole::Threads, {g.chunk}, /*parallel=*/true);
      d.addLevel(TileLevelRole::Register, {g.chunk / g.threads},
                 /*parallel=*/true);
      d.addLevel(TileLevelRole::Inner, {g.kvec}, /*parallel=*/false);
      d.threads = g.threads;
      d.vectorLoop = 0;
      d.vectorWidth = g.kvec;
      return d;
    }
    GpuLoops loops = analyzeGpuLoops(cast<linalg::LinalgOp>(anchor));
    ReduceSizes s = getReduceSizes(loops, knobs, target);
    LoopNestDescription d;
    d.ranges = loops.ranges;
    d.reduction.assign(loops.ranges.size(), false);
    d.reduction[s.k] = true;
    d.addLevel(TileLevelRole::Threads, s.block, /*parallel=*/true);
    SmallVector<int64_t> chunks(loops.ranges.size(), 0);
    chunks[s.k] = llvm::divideCeil(loops.ranges[s.k], s.threads);
    d.addLevel(TileLevelRole::Register, chunks, /*parallel=*/true);
    SmallVector<int64_t> inner(loops.ranges.size(), 0);
    inner[s.k] = s.kvec;
    d.addLevel(TileLevelRole::Inner, inner, /*parallel=*/false);
    d.threads = s.threads;
    d.vectorLoop = s.k;
    d.vectorWidth = d.levels.back().tile[s.k];
    return d;
  }

private:
  /// Tile sizes of the row loops that give one row per thread: 1 on the
  /// innermost mapped loop, 0 elsewhere (the other mapped loops are 1 per
  /// block already).
  static SmallVector<int64_t> rowTilesOf(const GpuLoops &loops) {
    SmallVector<int64_t> tiles(loops.ranges.size(), 0);
    tiles[loops.mapped.back()] = 1;
    return tiles;
  }
};

} // namespace

const SketchRule &ke::getGpuReduceRule() {
  static const GpuReduceRule rule;
  return rule;
}

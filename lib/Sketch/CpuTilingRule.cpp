//===- CpuTilingRule.cpp - Multi-level tiling for CPU ("SSRSRS") ----------===//
//
// The CPU sketch for every linalg structured op, after Ansor's CPU rules:
//
//   S  tile_using_forall on the outer parallel loops    knobs forall.dN, threads
//   R  tile_using_for on the innermost reduction loop   knob  kblock.dN (cache)
//   S  tile_using_for on all parallel loops             knobs reg.dN (registers)
//   R  tile_using_for on all reduction loops            knob  kvec.dN
//   The fills of the anchor's inits and its elementwise consumer (the
//   kernel's group, ke/Workload/Kernel.h) are fused into the outer tiles:
//   the consumer is tiled and the anchor and fills are computed per tile.
//   2-D channels-last convolutions and pooling are decomposed to 1-D (the
//   register level tiles the first output-image and window loops to 1), the
//   register and
//   inner loops are peeled where tiles are partial, so the main part of every
//   loop has static shapes, and the function is vectorized: contractions
//   become outer products, reductions inner reductions. The parallel loops
//   run on `threads` OpenMP threads (a lowering option, see
//   ke/Codegen/CpuPipeline.h).
//
//===----------------------------------------------------------------------===//

#include "CpuRules.h"
#include "CpuSupport.h"
#include "ScriptWriter.h"

#include "ke/Workload/Kernel.h"
#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "ke-sketch-cpu-tiling"

using namespace mlir;
using namespace ke;

namespace {

/// The loop structure of an anchor, as the rule sees it.
struct LoopNest {
  SmallVector<int64_t> ranges;
  SmallVector<unsigned> parallel;  // loop indices, outermost first
  SmallVector<unsigned> reduction; // loop indices, outermost first
  /// Loops the register level must tile to 1 so that decompose applies.
  SmallVector<unsigned> forcedUnit;
  bool decompose = false;
  bool isContraction = false;
  /// A channels-last convolution that decomposes to 1-D (its register
  /// loops are output columns by output channels, like a matmul's).
  bool isConvolution = false;
  unsigned elementBits = 32;
};

LoopNest analyze(linalg::LinalgOp op) {
  LoopNest nest;
  nest.ranges = op.getStaticLoopRanges();
  for (auto [index, type] : llvm::enumerate(op.getIteratorTypesArray()))
    (type == utils::IteratorType::parallel ? nest.parallel : nest.reduction)
        .push_back(index);
  WorkloadKind kind = classifyWorkload(op);
  nest.isContraction = kind == WorkloadKind::Contraction;
  // 2-D convolutions and pooling in channels-last layouts: decompose to 1-D
  // needs the first output image loop and the first window loop to be 1 in
  // the innermost tile. (Channels-first layouts decompose to 1-D NCW ops,
  // whose vectorization MLIR 22 gets wrong for some strided shapes: the
  // tuner caught wrong results, so they keep 2-D tiles.)
  llvm::StringRef name = op->getName().getStringRef();
  bool channelsLast = name.contains("_nhwc");
  if ((kind == WorkloadKind::Convolution || kind == WorkloadKind::Pooling) &&
      channelsLast) {
    FailureOr<linalg::ConvolutionDimensions> dims =
        linalg::inferConvolutionDims(op);
    if (succeeded(dims) && dims->outputImage.size() == 2 &&
        dims->filterLoop.size() == 2 && dims->depth.empty()) {
      nest.forcedUnit = {dims->outputImage[0], dims->filterLoop[0]};
      nest.decompose = true;
      nest.isConvolution = kind == WorkloadKind::Convolution;
    }
  }
  Type elementType = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  if (elementType.isIntOrFloat())
    nest.elementBits = std::max(8u, elementType.getIntOrFloatBitWidth());
  return nest;
}

/// The parallel loops that get register-tile knobs: the two innermost that
/// are not forced to 1 and have more than one iteration.
SmallVector<unsigned> registerLoops(const LoopNest &nest) {
  SmallVector<unsigned> loops;
  for (unsigned loop : llvm::reverse(nest.parallel)) {
    if (loops.size() == 2)
      break;
    if (!llvm::is_contained(nest.forcedUnit, loop) && nest.ranges[loop] > 1)
      loops.insert(loops.begin(), loop);
  }
  return loops;
}

/// The outer parallel loops that get forall knobs.
SmallVector<unsigned> forallLoops(const LoopNest &nest) {
  SmallVector<unsigned> loops;
  for (unsigned loop : nest.parallel)
    if (loops.size() < 2 && nest.ranges[loop] > 1)
      loops.push_back(loop);
  return loops;
}

/// The innermost reduction loop that is not forced to 1, if any.
std::optional<unsigned> innerReduction(const LoopNest &nest) {
  for (unsigned loop : llvm::reverse(nest.reduction))
    if (!llvm::is_contained(nest.forcedUnit, loop) && nest.ranges[loop] > 1)
      return loop;
  return std::nullopt;
}

/// True when every operand whose indexing map reads `loop` has it as its
/// innermost (contiguous) dimension.
bool isInnermostEverywhere(linalg::LinalgOp op, unsigned loop) {
  for (AffineMap map : op.getIndexingMapsArray()) {
    if (!map.isFunctionOfDim(loop))
      continue;
    if (map.getNumResults() == 0 ||
        map.getResults().back() != getAffineDimExpr(loop, op.getContext()))
      return false;
  }
  return true;
}

unsigned vectorLanes(const LoopNest &nest, const TargetDescription &target) {
  return std::max(1u, target.cpu.vectorBits / nest.elementBits);
}

/// Reconciles the defaults of a loop that both outer (forall) and register
/// tiles split. A register tile larger than the outer tile never fits in
/// one, so the loop stays scalar (cpu:a64fx's 48 cores give a 64-row matmul
/// outer tiles of 2 rows, against a default register tile of 4): the
/// register tile is capped at the outer tile. A smaller one that does not
/// divide the outer tile leaves a partial register tile in every outer tile:
/// the outer tile moves to the nearest multiple of the register tile among
/// its choices (the larger on a tie: fewer, fuller tiles), if there is one.
void reconcileDefaults(Knob &outer, Knob &reg) {
  int64_t outerTile = outer.choices[outer.defaultIndex];
  int64_t regTile = reg.choices[reg.defaultIndex];
  if (outerTile == 0 || outerTile % regTile == 0)
    return;
  if (regTile > outerTile) {
    auto it = llvm::upper_bound(reg.choices, outerTile);
    reg.defaultIndex = std::max<unsigned>(1, it - reg.choices.begin()) - 1;
    return;
  }
  std::optional<unsigned> best;
  for (auto [index, tile] : llvm::enumerate(outer.choices)) {
    if (tile == 0 || tile % regTile != 0)
      continue;
    int64_t distance = std::abs(tile - outerTile);
    if (!best || distance <= std::abs(outer.choices[*best] - outerTile))
      best = index;
  }
  if (best)
    outer.defaultIndex = *best;
}

/// Architectural vector registers: 32 with AVX-512 and on AArch64, else 16.
unsigned vectorRegisters(const TargetDescription &target) {
  return target.cpu.vectorBits >= 512 ||
                 llvm::StringRef(target.triple).starts_with("aarch64")
             ? 32
             : 16;
}

/// Whether tiling a loop of `range` iterations, already tiled by `outerTile`
/// (0: not tiled), by `tile` leaves no partial tile, so it needs no peeling.
bool dividesEvenly(int64_t range, int64_t outerTile, int64_t tile) {
  if (outerTile == 0)
    return range % tile == 0;
  // The enclosing tiles are full (outerTile) or the last one (the rest).
  return outerTile % tile == 0 && (range % outerTile) % tile == 0;
}

/// Whether the loop that tiling by `tile` creates has a partial tile that
/// peeling can split off: it must have more than one iteration (peeling a
/// single, partial iteration fails) and not divide evenly.
bool needsPeeling(int64_t range, int64_t outerTile, int64_t tile) {
  int64_t extent = outerTile == 0 ? range : std::min(range, outerTile);
  return tile < extent && !dividesEvenly(range, outerTile, tile);
}

/// The tile sizes of each level for an assignment (0: not tiled), shared by
/// the script and the loop-nest description so that they cannot disagree.
struct TileSizes {
  SmallVector<int64_t> outer, block, reg, inner;
};

TileSizes getTileSizes(const LoopNest &nest, const KnobAssignment &knobs) {
  unsigned numLoops = nest.ranges.size();
  TileSizes t;
  t.outer.assign(numLoops, 0);
  t.block.assign(numLoops, 0);
  t.reg.assign(numLoops, 0);
  t.inner.assign(numLoops, 0);
  for (unsigned loop : forallLoops(nest))
    t.outer[loop] = knobs.get(loopKnobName("forall", loop));
  for (unsigned loop : nest.parallel)
    t.reg[loop] = knobs.get(loopKnobName("reg", loop), 1);
  for (unsigned loop : nest.reduction)
    t.inner[loop] = knobs.get(loopKnobName("kvec", loop), 1);
  if (std::optional<unsigned> kLoop = innerReduction(nest))
    t.block[*kLoop] = knobs.get(loopKnobName("kblock", *kLoop));
  return t;
}

/// A level tiled with scf.for: its sizes and those of the level whose
/// partial tiles it may inherit (which decides peeling).
struct ForLevel {
  llvm::StringRef comment;
  TileLevelRole role;
  ArrayRef<int64_t> sizes, enclosing;
};

/// The scf.for levels, outermost first: reduction blocks, register tiles,
/// the inner reduction tile.
SmallVector<ForLevel, 3> getForLevels(const TileSizes &t,
                                      ArrayRef<int64_t> untiled) {
  return {{"R: reduction blocks that stay in cache", TileLevelRole::Cache,
           t.block, untiled},
          {"S: register tiles", TileLevelRole::Register, t.reg, t.outer},
          {"R: inner reduction tile, unrolled into the vector code",
           TileLevelRole::Inner, t.inner, t.block}};
}

/// The fused neighbours of a kernel's anchor (see ke/Workload/Kernel.h).
/// The anchor loop that the innermost loop-indexed dimension of its first
/// result iterates over; std::nullopt for 0-d results. Constant dimensions
/// (torch-mlir's keepdim reductions write `(d0, d1) -> (d0, 0)`) are
/// skipped: getDimPosition on them reads an AffineConstantExpr as a dim
/// expression, an uninitialized field, and indexed tile arrays with garbage.
std::optional<unsigned> innermostOutputLoop(linalg::LinalgOp op) {
  AffineMap map = op.getIndexingMapMatchingResult(op->getResult(0));
  for (AffineExpr result : llvm::reverse(map.getResults()))
    if (auto dim = dyn_cast<AffineDimExpr>(result))
      return dim.getPosition();
  return std::nullopt;
}

/// Whether `loop` walks only the innermost, contiguous dimension of every
/// operand that it indexes: masked scalable loads and stores of such
/// operands are plain SVE ld1/st1 (a loop that strides through an operand,
/// as n does through B of matmul_transposed_b, would need gathers).
bool isContiguousLoop(linalg::LinalgOp op, unsigned loop) {
  for (AffineMap map : op.getIndexingMapsArray()) {
    for (auto [index, result] : llvm::enumerate(map.getResults())) {
      if (!result.isFunctionOfDim(loop))
        continue;
      auto dim = dyn_cast<AffineDimExpr>(result);
      if (!dim || index + 1 != map.getNumResults())
        return false;
    }
  }
  return true;
}

/// Whether the LLVM 22 AArch64 backend lowers every math op of the body on
/// scalable vectors. It has no scalarization for them: math.tanh (and
/// math.erf, ...) on vector<[4]xf32> crash instruction selection, where
/// fixed vectors get libm calls per lane. The ones here map to SVE
/// instructions or are expanded (exp; checked by test/aarch64).
bool hasScalableMath(linalg::LinalgOp op) {
  WalkResult result = op->walk([](Operation *inner) {
    llvm::StringRef name = inner->getName().getStringRef();
    if (!name.starts_with("math."))
      return WalkResult::advance();
    return llvm::is_contained({"math.exp", "math.sqrt", "math.rsqrt",
                               "math.absf", "math.fma"},
                              name)
               ? WalkResult::advance()
               : WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

/// Whether a fused neighbour vectorizes with a scalable innermost loop.
bool isScalableNeighbour(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp)
    return op == nullptr;
  unsigned loops = linalgOp.getNumLoops();
  return loops > 0 && linalgOp.getNumReductionLoops() == 0 &&
         isContiguousLoop(linalgOp, loops - 1) && hasScalableMath(linalgOp);
}

/// The loop that scalable SVE vectorizes (tiles and vectors of `[N]`
/// elements, N x vscale at run time), or std::nullopt where the op keeps the
/// fixed-length path. Scalable: contractions, elementwise ops and fills
/// whose output's innermost loop is their innermost register loop and is
/// contiguous in every operand, with fused neighbours of the same kind.
/// Fixed: reductions along the innermost loop, convolutions and pooling (the
/// decomposed 1-D forms do not vectorize with scalable sizes in MLIR 22),
/// strided or transposed operands, math ops without a scalable lowering.
std::optional<unsigned> getScalableLoop(linalg::LinalgOp op,
                                        const LoopNest &nest,
                                        const TargetDescription &target) {
  if (!target.cpu.scalableVectors || nest.decompose)
    return std::nullopt;
  WorkloadKind kind = classifyWorkload(op);
  if (kind != WorkloadKind::Contraction && kind != WorkloadKind::Elementwise &&
      kind != WorkloadKind::Fill)
    return std::nullopt;
  AffineMap map = op.getIndexingMapMatchingResult(op->getResult(0));
  if (map.getNumResults() == 0)
    return std::nullopt;
  auto dim = dyn_cast<AffineDimExpr>(map.getResults().back());
  SmallVector<unsigned> regLoops = registerLoops(nest);
  if (!dim || regLoops.empty() || regLoops.back() != dim.getPosition() ||
      !isContiguousLoop(op, dim.getPosition()) || !hasScalableMath(op))
    return std::nullopt;
  KernelNeighbours neighbours = findKernelNeighbours(op);
  if (!isScalableNeighbour(neighbours.consumer) ||
      !isScalableNeighbour(neighbours.firstProducer))
    return std::nullopt;
  return dim.getPosition();
}

/// Tiles a neighbour (a fill or an elementwise consumer) to rows of `inner`
/// elements along its innermost loop, so the vectorizer sees small tiles;
/// with `scalable`, rows of `inner` x vscale elements, which are then
/// vectorized with masks.
void tileNeighbour(ScriptWriter &w, const std::string &handle, Operation *op,
                   int64_t inner, bool scalable = false) {
  unsigned loops = cast<linalg::LinalgOp>(op).getNumLoops();
  if (loops == 0)
    return;
  SmallVector<int64_t> sizes(loops, 1);
  sizes.back() = inner;
  SmallVector<bool> flags(loops, false);
  flags.back() = scalable;
  SmallVector<std::string> handles;
  w.comment("vector-sized tiles of a fused neighbour");
  w.tileUsingFor(handle, sizes, handles, flags);
  if (!scalable)
    return;
  // The tiled op's handle is consumed by tiling: match it again by its
  // attribute, with the anchor's peeled clones and all.
  w.vectorizeOps(w.match("", op->hasAttr(kConsumerAttr) ? kConsumerAttr
                                                         : kProducerAttr),
                 sizes, flags);
}

/// The loop along which cpu.tile carries vector partial results
/// (tile_reduction_using_for) instead of reducing across lanes on every
/// step: the innermost loop, when it is the only reduction of a plain
/// reduction (not a contraction, convolution or pooling: those accumulate
/// into their output tile) with one init, a combiner MLIR knows the neutral
/// element of, and at least 16 partial results (inner tile along it times
/// the register tile of the rows). With fewer, the lane-by-lane form wins:
/// LLVM vectorizes and interleaves that loop itself, while one short vector
/// of partial results waits on its own latency every step (GPT-2's 4 x 50257
/// row maximum, one row: 2 x 1 14 µs lane by lane against 145 µs carried;
/// 16 x 1 73 against 29; 16 x 4 224 against 13).
std::optional<unsigned> getPartialsLoop(linalg::LinalgOp op,
                                        const LoopNest &nest,
                                        ArrayRef<int64_t> reg,
                                        ArrayRef<int64_t> inner) {
  unsigned last = nest.ranges.size() - 1;
  if (nest.isContraction || nest.decompose || nest.reduction.size() != 1 ||
      nest.reduction.front() != last || op.getNumDpsInits() != 1 ||
      op.getNumLoops() < 1)
    return std::nullopt;
  int64_t partials = inner[last];
  for (unsigned loop = 0; loop < last; ++loop)
    partials *= std::max<int64_t>(1, reg[loop]);
  if (inner[last] <= 1 || partials < 16)
    return std::nullopt;
  Block *body = op.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  BlockArgument acc = body->getArguments().back();
  Operation *combiner =
      yield && yield->getNumOperands() == 1
          ? yield->getOperand(0).getDefiningOp()
          : nullptr;
  if (!combiner || !acc.hasOneUse() ||
      !llvm::is_contained(combiner->getOperands(), acc) ||
      !isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp>(combiner))
    return std::nullopt;
  return last;
}

class CpuTilingRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "cpu.tile"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    auto op = dyn_cast<linalg::LinalgOp>(anchor);
    return target.isCpu() && op && isStaticTensorOp(op);
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    LoopNest nest = analyze(cast<linalg::LinalgOp>(anchor));
    KnobSpace space;
    unsigned cores = std::max(1u, target.cpu.cores);

    // Waking a team of threads costs tens of microseconds: small loop nests
    // run on one thread by default.
    int64_t iterations = 1;
    for (int64_t range : nest.ranges)
      iterations *= range;
    bool parallelByDefault = cores > 1 && iterations >= (int64_t(1) << 18);
    space.knobs.push_back(makeThreadsKnob(cores, parallelByDefault));

    // Outer tiles: enough of them to feed every core by default.
    for (auto [position, loop] : llvm::enumerate(forallLoops(nest))) {
      int64_t range = nest.ranges[loop];
      Knob knob{loopKnobName("forall", loop), {0}, 0};
      for (int64_t tile : tileCandidates(range, range / 2))
        if (tile >= 2)
          knob.choices.push_back(tile);
      if (position == 0 && parallelByDefault && knob.choices.size() > 1)
        knob.defaultIndex =
            nearestChoice(knob.choices, llvm::divideCeil(range, cores));
      space.knobs.push_back(knob);
    }

    std::optional<unsigned> kLoop = innerReduction(nest);
    if (kLoop && nest.ranges[*kLoop] >= 64) {
      Knob knob{loopKnobName("kblock", *kLoop), {0}, 0};
      for (int64_t tile : {32, 64, 128, 256, 512})
        if (tile < nest.ranges[*kLoop])
          knob.choices.push_back(tile);
      space.knobs.push_back(knob);
    }

    // Register tiles: a vector's worth on the innermost loop, a few rows
    // of outer products on the next for contractions.
    SmallVector<unsigned> regLoops = registerLoops(nest);
    unsigned lanes = vectorLanes(nest, target);
    std::optional<unsigned> scalableLoop =
        getScalableLoop(cast<linalg::LinalgOp>(anchor), nest, target);
    // Contractions and channels-last convolutions default to an outer
    // product of 2 vectors by 8 rows (4 where the ISA has 16 vector
    // registers): 16 accumulators keep both FMA pipes of a core busy
    // through their latency, with room for the two B vectors and the A
    // broadcast. The former default, 1 vector by 4 rows, kept 4 chains in
    // flight: on this Zen 5 (2 cores, 516 GFLOP/s measured with
    // `ke-baselines fma-peak 2`), sgemm 1024^3 ran at 120 GFLOP/s untuned
    // against 458 with 8 x 32 and 128-deep K blocks, and the suite's conv2d
    // NHWC at 71 against 491 (oneDNN: 461 and 490; `ke-opt bench
    // --records` of benchmarks/gpu/knob_records.py, 2026-11-29).
    // Only where every operand that the innermost register loop indexes
    // holds it innermost (vector loads and stores): with B transposed
    // (matmul_transposed_b) the outer product gathers B's columns, 0.83x
    // of the former default there.
    bool outerProduct =
        (nest.isContraction || nest.isConvolution) && regLoops.size() == 2 &&
        !scalableLoop &&
        isInnermostEverywhere(cast<linalg::LinalgOp>(anchor), regLoops.back());
    // nn.Linear's layout (B stored N x K) holds only K innermost in both
    // operands: tiles of up to 8 x 8 results, each summed over vectors of 4
    // along K, every tile dividing its loop (a partial register tile is
    // peeled into scalar code). The outer-product default gathers B's
    // columns there, and its partial tiles went scalar: on this Zen 5
    // (2026-11-29, `ke-opt bench --records`), BERT's QKV projection
    // 3072 x 2304 x 768 108.6 -> 67.1 ms, the realistic set's small
    // nn.Linear shapes 40 x 72 x 48 51 -> 3.3 us, 25 x 48 x 24 10.6 -> 0.8,
    // 4 x 503 x 32 24 -> 10.4, the suite's 64 x 48 x 32 3.8 -> 2.4.
    bool dotProduct =
        nest.isContraction && !outerProduct && regLoops.size() == 2 &&
        !scalableLoop && kLoop &&
        isInnermostEverywhere(cast<linalg::LinalgOp>(anchor), *kLoop);
    for (auto [position, loop] : llvm::enumerate(regLoops)) {
      Knob knob{loopKnobName("reg", loop),
                tileCandidates(nest.ranges[loop], 64), 0};
      if (loop == scalableLoop) {
        // Scalable tiles of whole 128-bit granules (power-of-two element
        // counts, which SVE types need); masks cover partial tiles.
        knob.choices.clear();
        for (int64_t tile = lanes; tile <= std::max<int64_t>(lanes, 4 * lanes);
             tile *= 2)
          if (tile == lanes || tile <= llvm::alignTo(nest.ranges[loop], lanes))
            knob.choices.push_back(tile);
      }
      bool innermost = position + 1 == regLoops.size();
      int64_t preferred = innermost ? lanes : (nest.isContraction ? 4 : 1);
      if (outerProduct) {
        // The largest of these that divides the loop: a partial register
        // tile would be peeled into code that is not vectorized.
        SmallVector<int64_t> tiles =
            innermost ? SmallVector<int64_t>{2 * lanes, lanes}
                      : (vectorRegisters(target) >= 32
                             ? SmallVector<int64_t>{8, 4}
                             : SmallVector<int64_t>{4});
        auto divides = llvm::find_if(
            tiles, [&](int64_t t) { return nest.ranges[loop] % t == 0; });
        if (divides != tiles.end())
          preferred = *divides;
      }
      knob.defaultIndex =
          dotProduct
              ? largestDivisorChoice(knob.choices, nest.ranges[loop], 8)
              : nearestChoice(knob.choices, preferred);
      space.knobs.push_back(knob);
    }
    if (kLoop) {
      Knob knob{loopKnobName("kvec", *kLoop),
                tileCandidates(nest.ranges[*kLoop], 16), 0};
      int64_t preferred = nest.isContraction || outerProduct ? 1 : lanes;
      // Reductions without parallel register loops vectorize along k.
      knob.defaultIndex =
          dotProduct
              ? largestDivisorChoice(knob.choices, nest.ranges[*kLoop], 4)
              : nearestChoice(knob.choices, preferred);
      space.knobs.push_back(knob);
    }
    // With that tile, K blocks of 128 keep a block's B panel (128 x 32
    // f32, 16 KiB) in L1 across the rows: 458 against 373 GFLOP/s unblocked
    // on the sgemm above (64: 419, 256: 339).
    if (outerProduct && kLoop && nest.ranges[*kLoop] >= 256) {
      int kblock = space.find(loopKnobName("kblock", *kLoop));
      if (kblock >= 0)
        space.knobs[kblock].defaultIndex =
            nearestChoice(space.knobs[kblock].choices, 128);
    }
    for (unsigned loop : forallLoops(nest)) {
      int outer = space.find(loopKnobName("forall", loop));
      int reg = space.find(loopKnobName("reg", loop));
      if (outer >= 0 && reg >= 0)
        reconcileDefaults(space.knobs[outer], space.knobs[reg]);
    }
    // Contractions may pad partial tiles (with zeros, neutral for their
    // multiply-add) instead of peeling them: one vector kernel for all tiles.
    // (Scalable tiles are masked: nothing to pad.)
    if (nest.isContraction && !scalableLoop)
      space.knobs.push_back(Knob{"pad", {0, 1}, 0});
    // Unrolling the loop over inner reduction tiles puts several of them in
    // one iteration (more independent vector work between branches).
    if (kLoop)
      space.knobs.push_back(Knob{"unroll", {1, 2, 4}, 0});
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] cpu.tile on " << anchor->getName() << ": "
               << (scalableLoop ? "scalable, " : "") << "defaults "
               << KnobAssignment(space, getDefaultIndices(space)).str()
               << "\n");
    return space;
  }

  LogicalResult checkLimits(Operation *anchor, const TargetDescription &target,
                            const KnobAssignment &knobs,
                            std::string &reason) const override {
    LoopNest nest = analyze(cast<linalg::LinalgOp>(anchor));
    int64_t accumulators = 1;
    for (unsigned loop : registerLoops(nest))
      accumulators *= knobs.get(loopKnobName("reg", loop), 1);
    int64_t capacity =
        int64_t(vectorRegisters(target)) * vectorLanes(nest, target);
    if (accumulators > capacity) {
      reason = llvm::formatv("register tile of {0} elements exceeds the {1} "
                             "that fit in vector registers",
                             accumulators, capacity);
      return failure();
    }
    std::optional<unsigned> kLoop = innerReduction(nest);
    int64_t unrolled =
        accumulators * (kLoop ? knobs.get(loopKnobName("kvec", *kLoop), 1) : 1);
    if (unrolled > 8192) {
      reason = llvm::formatv("innermost tile of {0} operations is too much "
                             "straight-line code (limit 8192)",
                             unrolled);
      return failure();
    }
    return success();
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    auto op = cast<linalg::LinalgOp>(anchor);
    LoopNest nest = analyze(op);
    unsigned numLoops = nest.ranges.size();
    TileSizes sizes = getTileSizes(nest, knobs);
    const SmallVector<int64_t> &outer = sizes.outer, &reg = sizes.reg,
                               &inner = sizes.inner;
    std::optional<unsigned> scalableLoop = getScalableLoop(op, nest, target);
    SmallVector<bool> scalable(numLoops, false);
    if (scalableLoop)
      scalable[*scalableLoop] = true;

    ScriptWriter w;
    w.comment("sketch cpu.tile: " + knobs.str());
    KernelHandles kernel = matchKernel(w, anchor);
    std::string current = kernel.anchor, consumer = kernel.consumer,
                producers = kernel.producers;
    const KernelNeighbours &neighbours = kernel.neighbours;

    if (llvm::any_of(outer, [](int64_t t) { return t != 0; })) {
      std::string forall;
      if (neighbours.consumer) {
        // Tile the consumer and compute the anchor's tile inside it, while
        // that tile is in cache.
        w.comment("S: outer parallel tiles of the consumer, the anchor fused "
                  "into them, one scf.forall over threads");
        consumer = w.tileUsingForall(
            consumer, mapToConsumer(op, neighbours.consumer, outer), forall);
        w.fuseInto(current, forall);
      } else {
        w.comment("S: outer parallel tiles, one scf.forall over threads");
        current = w.tileUsingForall(current, outer, forall);
      }
      if (neighbours.hasProducers) {
        w.comment("the fills of the anchor's inits, per tile");
        w.fuseInto(producers, forall);
      }
    }

    // The levels tiled with scf.for: reduction blocks, register tiles and
    // the inner reduction tile. Loops with partial tiles are peeled after.
    SmallVector<std::string> peel;
    auto tileFor = [&](llvm::StringRef what, ArrayRef<int64_t> sizes,
                       ArrayRef<int64_t> enclosing, ArrayRef<bool> flags) {
      SmallVector<std::string> handles(numLoops);
      if (llvm::all_of(sizes, [](int64_t size) { return size == 0; }))
        return handles;
      w.comment(what.str());
      SmallVector<std::string> loops;
      current = w.tileUsingFor(current, sizes, loops, flags);
      auto handle = loops.begin();
      for (unsigned loop = 0; loop < numLoops; ++loop) {
        if (sizes[loop] == 0)
          continue;
        handles[loop] = *handle++;
        // Scalable tiles are masked, not peeled.
        if (!flags[loop] &&
            needsPeeling(nest.ranges[loop], enclosing[loop], sizes[loop]))
          peel.push_back(handles[loop]);
      }
      return handles;
    };
    SmallVector<int64_t> untiled(numLoops, 0);
    SmallVector<std::string> innerLoops;
    SmallVector<bool> fixed(numLoops, false);
    std::optional<unsigned> partialsLoop =
        scalableLoop ? std::nullopt : getPartialsLoop(op, nest, reg, inner);
    for (const ForLevel &level : getForLevels(sizes, untiled)) {
      if (level.role == TileLevelRole::Inner && partialsLoop) {
        // A plain reduction along its innermost loop: the tile's vector of
        // partial results is carried along the loop and combined across
        // lanes once after it. Reducing across lanes on every step (the
        // tile_using_for form) cost 5x on GPT-2's 4 x 50257 row maximum.
        w.comment("R: inner reduction tile: vector partial results carried "
                  "along the reduction, combined once after it");
        std::string partial = w.fresh("partial"), loop = w.fresh("loop");
        w.line(llvm::formatv(
            "{0}, {1}, {2}, {3} = transform.structured."
            "tile_reduction_using_for {4} by tile_sizes = {5} : "
            "(!transform.any_op) -> (!transform.any_op, !transform.any_op, "
            "!transform.any_op, !transform.any_op)",
            w.fresh("init"), partial, w.fresh("combine"), loop, current,
            ScriptWriter::list(level.sizes)));
        current = partial;
        std::string typed = w.fresh("loop");
        w.line(typed + " = transform.cast " + loop +
               " : !transform.any_op to !transform.op<\"scf.for\">");
        innerLoops.assign(numLoops, "");
        innerLoops[*partialsLoop] = typed;
        if (needsPeeling(nest.ranges[*partialsLoop],
                         level.enclosing[*partialsLoop],
                         level.sizes[*partialsLoop]))
          peel.push_back(typed);
        continue;
      }
      innerLoops = tileFor(level.comment, level.sizes, level.enclosing,
                           level.role == TileLevelRole::Register ? scalable
                                                                 : fixed);
    }

    if (nest.decompose) {
      std::string decomposed = w.fresh("op");
      w.comment("2-D window op -> 1-D, which the vectorizer handles");
      w.line(llvm::formatv("{0} = transform.structured.decompose {1} : "
                           "(!transform.any_op) -> !transform.any_op",
                           decomposed, current));
    }
    bool pad = knobs.get("pad", 0) != 0 && !peel.empty();
    if (pad) {
      // Partial tiles padded with zeros to the full register and inner
      // tiles; the vectorizer turns the pads into masked reads.
      SmallVector<int64_t> multiples;
      for (unsigned loop = 0; loop < numLoops; ++loop)
        multiples.push_back(std::max<int64_t>(1, reg[loop] ? reg[loop]
                                                            : inner[loop]));
      SmallVector<std::string> zeros;
      for (Value operand : op->getOperands()) {
        Type type = getElementTypeOrSelf(operand.getType());
        zeros.push_back(isa<FloatType>(type) ? "0.0 : " + typeName(type)
                                             : "0 : " + typeName(type));
      }
      SmallVector<int64_t> dims;
      for (unsigned loop = 0; loop < numLoops; ++loop)
        dims.push_back(loop);
      w.comment("pad partial tiles instead of peeling them");
      w.line(llvm::formatv(
          "{0}, {1}, {2} = transform.structured.pad {3} pad_to_multiple_of "
          "{4} {{padding_values = [{5}], padding_dimensions = {6}} : "
          "(!transform.any_op) -> (!transform.any_op, !transform.any_op, "
          "!transform.any_op)",
          w.fresh("op"), w.fresh("pad"), w.fresh("copy"), current,
          ScriptWriter::list(multiples), llvm::join(zeros, ", "),
          ScriptWriter::list(dims)));
    } else {
      // Innermost loops first, so that each peel clones already peeled
      // loops.
      for (const std::string &loop : llvm::reverse(peel)) {
        std::string main = w.peel(loop);
        for (std::string &handle : innerLoops)
          if (handle == loop)
            handle = main;
      }
    }
    std::optional<unsigned> kLoop = innerReduction(nest);
    int64_t unroll = knobs.get("unroll", 1);
    if (kLoop && unroll > 1 && !innerLoops[*kLoop].empty()) {
      const std::string &loop = innerLoops[*kLoop];
      bool peeled = llvm::StringRef(loop).starts_with("%main");
      w.comment("unroll the loop over inner reduction tiles");
      w.line(llvm::formatv("transform.loop.unroll {0} {{factor = {1}} : {2}",
                           loop, unroll,
                           peeled ? "!transform.any_op"
                                  : "!transform.op<\"scf.for\">"));
    }
    // Fused (or unfused) neighbours get vector-sized tiles too, so that no
    // op reaches the vectorizer with a whole tensor.
    std::optional<unsigned> innerLoop = innermostOutputLoop(op);
    int64_t innerTile = innerLoop ? std::max<int64_t>(1, reg[*innerLoop]) : 1;
    if (scalableLoop) {
      // Scalable SVE: every op vectorized with its own masked sizes, the
      // innermost output loop [N] wide (N x vscale elements at run time).
      w.comment("scalable SVE: masked vectors, [N] = N x vscale elements");
      SmallVector<int64_t> vectorSizes;
      for (unsigned loop = 0; loop < numLoops; ++loop)
        vectorSizes.push_back(std::max<int64_t>(
            1, llvm::is_contained(nest.reduction, loop) ? inner[loop]
                                                        : reg[loop]));
      w.vectorizeOps(w.match(anchor->getName().getStringRef(), kAnchorAttr),
                     vectorSizes, scalable);
      if (neighbours.consumer)
        tileNeighbour(w, consumer, neighbours.consumer, innerTile,
                      /*scalable=*/true);
      if (neighbours.hasProducers)
        tileNeighbour(w, producers, neighbours.firstProducer, innerTile,
                      /*scalable=*/true);
      w.lowerMaskedVectors();
      return w.finish();
    }
    if (neighbours.consumer)
      tileNeighbour(w, consumer, neighbours.consumer, innerTile);
    if (neighbours.hasProducers)
      tileNeighbour(w, producers, neighbours.firstProducer, innerTile);
    if (partialsLoop) {
      // The peeled partial reductions' tile sizes are affine.min ops until
      // canonicalized: vectorize_children_and_apply_patterns would leave
      // them scalar (MLIR 22).
      w.comment("fold the peeled loops' tile sizes to constants");
      std::string func = w.match("func.func");
      w.line("transform.apply_patterns to " + func +
             " {\n  transform.apply_patterns.canonicalization\n} : "
             "!transform.any_op");
    }
    w.comment("vectorize the static inner tiles and lower the vector ops");
    w.vectorizeFunction(
        {"vector.lower_contraction lowering_strategy = \"outerproduct\"",
         "vector.lower_multi_reduction lowering_strategy = \"innerreduction\"",
         "vector.transfer_permutation_patterns", "vector.lower_outerproduct",
         "canonicalization"},
        /*vectorizePadding=*/pad);
    return w.finish();
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    auto op = cast<linalg::LinalgOp>(anchor);
    LoopNest nest = analyze(op);
    unsigned numLoops = nest.ranges.size();
    TileSizes sizes = getTileSizes(nest, knobs);
    LoopNestDescription d;
    d.ranges = nest.ranges;
    d.reduction.assign(numLoops, false);
    for (unsigned loop : nest.reduction)
      d.reduction[loop] = true;
    bool outerTiled =
        llvm::any_of(sizes.outer, [](int64_t t) { return t != 0; });
    d.addLevel(TileLevelRole::Threads, sizes.outer, /*parallel=*/outerTiled);
    SmallVector<int64_t> untiled(numLoops, 0);
    bool partial = false;
    std::optional<unsigned> scalableLoop = getScalableLoop(op, nest, target);
    for (const ForLevel &level : getForLevels(sizes, untiled)) {
      d.addLevel(level.role, level.sizes, /*parallel=*/false);
      for (unsigned loop = 0; loop < numLoops; ++loop)
        partial |= level.sizes[loop] != 0 && loop != scalableLoop &&
                   needsPeeling(nest.ranges[loop], level.enclosing[loop],
                                level.sizes[loop]);
    }
    d.threads = knobs.get("threads", 1);
    if (partial)
      d.partialTiles = knobs.get("pad", 0) != 0 ? PartialTileHandling::Padded
                                                : PartialTileHandling::Peeled;
    if (std::optional<unsigned> kLoop = innerReduction(nest))
      if (sizes.inner[*kLoop] != 0)
        d.unroll = knobs.get("unroll", 1);
    // Contractions, convolutions and pooling become outer products along
    // the output's innermost loop; other ops vector along their innermost
    // loop with more than one element.
    const SmallVector<int64_t> &innerTile = d.levels.back().tile;
    WorkloadKind kind = classifyWorkload(op);
    if (kind == WorkloadKind::Contraction ||
        kind == WorkloadKind::Convolution || kind == WorkloadKind::Pooling) {
      d.vectorLoop = innermostOutputLoop(op);
    } else {
      for (unsigned loop = numLoops; loop-- > 0;)
        if (innerTile[loop] > 1) {
          d.vectorLoop = loop;
          break;
        }
    }
    if (d.vectorLoop)
      d.vectorWidth = innerTile[*d.vectorLoop];
    return d;
  }
};

} // namespace

const SketchRule &ke::getCpuTilingRule() {
  static const CpuTilingRule rule;
  return rule;
}

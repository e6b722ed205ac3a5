//===- GpuTiling.cpp - Block/thread tiling shared by two GPU rules --------===//
//
//   S  tile_using_forall, #gpu.block   knobs block.dN    (mapped loops)
//   R  tile_using_for on the innermost reduction, inputs padded and copied
//      to shared memory by all threads  knobs promote, kblock.dK
//   S  tile_using_forall, #gpu.thread  knobs thread.dN   (register tiles)
//   R  tile_using_for on the rest       knob  kvec.dK
// The anchor's fills and elementwise consumer are fused into the block
// tiles (the consumer is tiled, the anchor fused into it) and get thread
// foralls of the same thread tiles.
//
//===----------------------------------------------------------------------===//

#include "GpuTiling.h"

#include "ke/Workload/Kernel.h"
#include "ke/Workload/Workload.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "ke-sketch-gpu-tiling"

using namespace mlir;
using namespace ke;

namespace {

/// Candidate values of the stage (kblock) knob: divisors of K from 4 up.
SmallVector<int64_t> stageCandidates(int64_t range) {
  SmallVector<int64_t> choices;
  for (int64_t tile : tileCandidates(range, 64))
    if (tile >= 4 && range % tile == 0)
      choices.push_back(tile);
  if (choices.empty())
    choices.push_back(range);
  return choices;
}

/// The shape of input `operand`'s tile within one stage of the reduction.
SmallVector<int64_t> stagedOperandShape(linalg::LinalgOp op, OpOperand *operand,
                                        const GpuLoops &loops,
                                        const GpuTileSizes &sizes) {
  AffineMap map = op.getMatchingIndexingMap(operand);
  SmallVector<int64_t> shape;
  for (unsigned d = 0; d < map.getNumResults(); ++d) {
    // A constant index (torch-mlir's keepdim `(d0, 0)`) reads one element
    // of its dimension; getDimPosition would misread it as a loop.
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(d));
    if (!dim) {
      shape.push_back(1);
      continue;
    }
    unsigned loop = dim.getPosition();
    int64_t tile = sizes.stage[loop] ? sizes.stage[loop] : sizes.block[loop];
    shape.push_back(tile ? std::min(tile, loops.ranges[loop])
                         : loops.ranges[loop]);
  }
  return shape;
}

/// Candidate block tiles: the divisors of the loop's range up to `maxTile`.
/// A partial block tile would give its thread forall a dynamic trip count,
/// which cannot be mapped to threads (partial tiles are neither padded nor
/// peeled yet).
SmallVector<int64_t> blockCandidates(int64_t range, int64_t maxTile) {
  SmallVector<int64_t> choices;
  for (int64_t tile : tileCandidates(range, maxTile))
    if (range % tile == 0)
      choices.push_back(tile);
  return choices;
}

/// True when some loop of the op other than the mapped ones has more than one
/// iteration and is a reduction: each thread then accumulates its tile in an
/// scf.for, which needs a static tile.
bool hasReductionLoop(const GpuLoops &loops) {
  return llvm::any_of(loops.reduction,
                      [&](unsigned loop) { return loops.ranges[loop] > 1; });
}

/// Shared memory the staged inputs take, in bytes.
int64_t stagedBytes(linalg::LinalgOp op, const GpuLoops &loops,
                    const GpuTileSizes &sizes) {
  int64_t bytes = 0;
  for (OpOperand *input : op.getDpsInputOperands()) {
    int64_t elements = 1;
    for (int64_t extent : stagedOperandShape(op, input, loops, sizes))
      elements *= extent;
    unsigned bits = getElementTypeOrSelf(input->get().getType())
                        .getIntOrFloatBitWidth();
    bytes += elements * std::max(1u, bits / 8);
  }
  return bytes;
}

/// Tiles of a cooperative copy of `shape` by `threads` threads: vector-wide
/// pieces of the innermost dimension, the threads left spread over the
/// outer ones; iterations never exceed `threads`.
SmallVector<int64_t> copyTiles(ArrayRef<int64_t> shape, int64_t threads,
                               int64_t vector) {
  SmallVector<int64_t> tiles(shape.size(), 0);
  int64_t last = shape.back();
  while (vector > 1 && last % vector != 0)
    vector /= 2;
  int64_t cols = std::max(vector, int64_t(llvm::divideCeil(last, threads)));
  tiles.back() = cols;
  int64_t budget = threads / llvm::divideCeil(last, cols);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d) {
    int64_t spread = std::max<int64_t>(1, std::min(shape[d], budget));
    tiles[d] = llvm::divideCeil(shape[d], spread);
    budget = std::max<int64_t>(1, budget / llvm::divideCeil(shape[d], tiles[d]));
  }
  // A tile of the whole extent needs no forall dimension.
  for (auto [d, tile] : llvm::enumerate(tiles))
    if (tile >= shape[d])
      tile = 0;
  return tiles;
}

/// Registers one thread needs, roughly: accumulators, one stage of operand
/// fragments, addressing.
int64_t estimateRegisters(const GpuLoops &loops, const GpuTileSizes &sizes) {
  int64_t words = std::max(1u, loops.elementBits / 32);
  int64_t accumulators = 1, fragments = 0;
  for (unsigned loop : loops.mapped) {
    int64_t t = std::min(sizes.thread[loop], loops.ranges[loop]);
    accumulators *= t;
    fragments += t;
  }
  int64_t kvec = loops.innerReduction ? sizes.inner[*loops.innerReduction] : 1;
  return accumulators * words + fragments * std::max<int64_t>(1, kvec) + 24;
}

/// The dimensions of a convolution anchor that gets the convolution
/// schedule (batch blocks, decomposition); none for other ops. Channels-
/// first convolutions (output channels not the innermost output dimension)
/// do not get it: on an H200 the NCHW strided convolution gave wrong
/// results under it (relative L2 error 0.7-0.9 in 11 of 24 candidates,
/// 2026-11-21), so channels-first ones keep the contraction schedule that
/// was checked correct until that is understood.
std::optional<linalg::ConvolutionDimensions> convDims(linalg::LinalgOp op) {
  if (classifyWorkload(op) != WorkloadKind::Convolution)
    return std::nullopt;
  FailureOr<linalg::ConvolutionDimensions> dims =
      linalg::inferConvolutionDims(op);
  if (failed(dims))
    return std::nullopt;
  AffineMap output = op.getIndexingMapMatchingResult(op->getResult(0));
  if (!dims->outputChannel.empty() && output.getNumResults() > 0 &&
      !output.getResult(output.getNumResults() - 1)
           .isFunctionOfDim(dims->outputChannel.back()))
    return std::nullopt;
  return *dims;
}

/// True for the 2-D convolutions that transform.structured.decompose turns
/// into 1-D ones once a thread's output row and filter row are single: the
/// linalg vectorizer handles 1-D convolutions only (a 2-D one would be
/// lowered to scalar loops).
bool isDecomposable(linalg::LinalgOp op) {
  // Depthwise convolutions decompose too, but their vectorized 1-D form
  // does not lower to NVVM yet (an unrealized cast is left).
  return isa<linalg::Conv2DNhwcHwcfOp, linalg::Conv2DNchwFchwOp>(
      op.getOperation());
}

/// gpu.tile's tile sizes with what convolutions need on top: the output
/// rows of a decomposable convolution are computed one at a time (its
/// register tile spans output columns and channels, see isDecomposable).
GpuTileSizes tileSizesFor(linalg::LinalgOp op, const GpuLoops &loops,
                          const KnobAssignment &knobs) {
  GpuTileSizes sizes = getGpuTileSizes(loops, knobs);
  std::optional<linalg::ConvolutionDimensions> conv = convDims(op);
  if (conv && isDecomposable(op) && conv->outputImage.size() == 2) {
    unsigned row = conv->outputImage.front();
    if (sizes.thread[row] > 1)
      sizes.inner[row] = 1;
  }
  return sizes;
}

/// The loops tiled by the block forall, outermost first (mapped to block
/// z, y, x, or numbered linearly beyond three): for convolutions every
/// parallel loop whose block tile is smaller than its range, so the batch
/// (and depth) get blocks of their own while a loop held whole by one block
/// (the output channels, often) needs no grid dimension; for other ops the
/// mapped loops and the unmapped ones split over blocks (block knobs of
/// GpuTilingParams::blocksForUnmappedLoops).
SmallVector<unsigned> blockLoops(linalg::LinalgOp op, const GpuLoops &loops,
                                 const GpuTileSizes &sizes) {
  bool conv = convDims(op).has_value();
  SmallVector<unsigned> result;
  for (unsigned loop : loops.parallel) {
    bool split = sizes.block[loop] > 0 && sizes.block[loop] < loops.ranges[loop];
    if (split || (!conv && llvm::is_contained(loops.mapped, loop)))
      result.push_back(loop);
  }
  if (result.empty() && !loops.mapped.empty())
    result.push_back(loops.mapped.back());
  return result;
}

/// Steps of 1 along the parallel loops that each thread runs one at a time
/// (not mapped to threads, more than one iteration left after the block
/// tile); 0 elsewhere.
SmallVector<int64_t> perThreadParallelSteps(const GpuLoops &loops,
                                            const GpuTileSizes &sizes) {
  SmallVector<int64_t> steps(loops.ranges.size(), 0);
  for (unsigned loop : loops.parallel) {
    if (llvm::is_contained(loops.mapped, loop) || sizes.inner[loop] != 1)
      continue;
    int64_t extent = sizes.block[loop] > 0 ? sizes.block[loop]
                                           : loops.ranges[loop];
    if (extent > 1)
      steps[loop] = 1;
  }
  return steps;
}

/// The block forall's tile sizes (0 for loops not in `tiled`).
SmallVector<int64_t> blockForallTiles(const GpuTileSizes &sizes,
                                      ArrayRef<unsigned> tiled) {
  SmallVector<int64_t> tiles(sizes.block.size(), 0);
  for (unsigned loop : tiled)
    tiles[loop] = sizes.block[loop];
  return tiles;
}

/// The most blocks a linear grid (all on x) holds.
constexpr int64_t kMaxLinearBlocks = (int64_t(1) << 31) - 1;

/// The number of blocks along each loop in `blocks` (outermost first).
SmallVector<int64_t> blockCounts(const GpuLoops &loops,
                                 const GpuTileSizes &sizes,
                                 ArrayRef<unsigned> blocks) {
  SmallVector<int64_t> counts;
  for (unsigned loop : blocks)
    counts.push_back(llvm::divideCeil(loops.ranges[loop], sizes.block[loop]));
  return counts;
}

/// The blocks of a linear grid over `counts`, at most kMaxLinearBlocks + 1
/// (more than the grid holds).
int64_t linearBlockCount(ArrayRef<int64_t> counts) {
  int64_t total = 1;
  for (int64_t count : counts)
    total = std::min(total * count, kMaxLinearBlocks + 1);
  return total;
}

/// True when the block forall numbers its blocks linearly along grid x
/// (`#gpu.block<linear_dim_N>` with grid_dims): more than three loops split
/// over blocks (a convolution's batch besides its three mapped loops), or
/// more than 65535 blocks along grid y or z, which a 2^18-column transpose
/// needs. One grid dimension per loop otherwise.
bool usesLinearBlocks(ArrayRef<int64_t> counts) {
  if (counts.size() > 3)
    return true;
  for (auto [position, count] : llvm::enumerate(llvm::reverse(counts)))
    if (position > 0 && count > 65535)
      return true;
  return false;
}

/// The block mapping of a forall over `tiled` (a subset of `blocks`, in
/// forall order): grid z, y, x, or linear ids, the innermost fastest.
std::string blockMapping(ArrayRef<unsigned> blocks, ArrayRef<unsigned> tiled,
                         bool linear) {
  SmallVector<std::string> attrs;
  for (auto [i, loop] : llvm::enumerate(tiled))
    attrs.push_back(
        linear ? "#gpu.block<linear_dim_" +
                     std::to_string(tiled.size() - 1 - i) + ">"
               : mappingAttr("block", llvm::find(blocks, loop) -
                                          blocks.begin(),
                             blocks.size()));
  return "[" + llvm::join(attrs, ", ") + "]";
}

} // namespace

GpuTilingParams GpuTilingParams::forContractions() {
  GpuTilingParams p;
  p.convolutionKnobs = true;
  p.largeRegisterTiles = true;
  p.registerRowsY = 4;
  p.maxThreadsX = 16;
  p.maxBlockTile = 256;
  p.maxThreadTile = 8;
  p.reductionKnobs = true;
  return p;
}

GpuTilingParams GpuTilingParams::forElementwise() {
  GpuTilingParams p;
  p.blocksForUnmappedLoops = true;
  return p;
}

GpuTileSizes ke::getGpuTileSizes(const GpuLoops &loops,
                                 const KnobAssignment &knobs) {
  unsigned n = loops.ranges.size();
  GpuTileSizes s;
  s.block.assign(n, 0);
  s.thread.assign(n, 0);
  s.inner.assign(n, 0);
  s.stage.assign(n, 0);
  for (unsigned loop : loops.mapped) {
    s.block[loop] =
        std::min(knobs.get(loopKnobName("block", loop), 1), loops.ranges[loop]);
    s.thread[loop] =
        std::min(knobs.get(loopKnobName("thread", loop), 1), s.block[loop]);
  }
  // Parallel loops that are not mapped run in each thread, one at a time;
  // convolutions may split them over blocks (block.dN, 0: not split).
  for (unsigned loop : loops.parallel)
    if (!llvm::is_contained(loops.mapped, loop) && loops.ranges[loop] > 1) {
      s.inner[loop] = 1;
      s.block[loop] = std::min(knobs.get(loopKnobName("block", loop), 0),
                               loops.ranges[loop]);
    }
  for (unsigned loop : loops.reduction)
    if (loops.ranges[loop] > 1)
      s.inner[loop] = 1;
  if (loops.innerReduction) {
    unsigned k = *loops.innerReduction;
    s.inner[k] = knobs.get(loopKnobName("kvec", k), 1);
    s.promote = knobs.get("promote", 0) != 0;
    if (s.promote)
      s.stage[k] = knobs.get(loopKnobName("kblock", k), loops.ranges[k]);
  }
  s.threads = threadsPerLoop(loops, s.block, s.thread);
  s.dims = blockDims(s.threads);
  return s;
}

bool GpuTilingRule::canPromote(linalg::LinalgOp op) {
  return op.getNumReductionLoops() == 1 && op.getNumDpsInits() == 1 &&
         llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *operand) {
           auto type = dyn_cast<ShapedType>(operand->get().getType());
           return type && type.getRank() > 0 &&
                  op.getMatchingIndexingMap(operand).isProjectedPermutation();
         });
}

KnobSpace GpuTilingRule::getKnobSpace(Operation *anchor,
                                      const TargetDescription &target) const {
  auto op = cast<linalg::LinalgOp>(anchor);
  GpuLoops loops = analyzeGpuLoops(op);
  KnobSpace space;
  int64_t vector = vectorElements(loops.elementBits);
  // Eight warps (wavefronts) per block by default: enough to hide latency,
  // few enough that several blocks share a multiprocessor.
  int64_t budget =
      std::min<int64_t>(8 * target.gpu.warpSize, target.gpu.maxThreadsPerBlock);
  SmallVector<int64_t> blockDefaults, threadDefaults;
  std::optional<linalg::ConvolutionDimensions> conv =
      params.convolutionKnobs ? convDims(op) : std::nullopt;
  // Large contractions get 8x8 register tiles (128x128 block tiles of 16x16
  // threads): twice the FMAs per shared-memory load of 4x4 tiles. Only where
  // that still leaves two blocks per multiprocessor; smaller ones keep
  // 4x4 register tiles (64x64 blocks) and more blocks.
  bool largeTiles = false;
  if (params.largeRegisterTiles && loops.mapped.size() >= 2) {
    unsigned y = loops.mapped[loops.mapped.size() - 2],
             x = loops.mapped.back();
    int64_t blocks = 1;
    for (unsigned loop : loops.mapped)
      blocks *= loop == x || loop == y ? loops.ranges[loop] / 128
                                       : loops.ranges[loop];
    int64_t multiprocessors =
        target.gpu.multiprocessors ? target.gpu.multiprocessors : 132;
    largeTiles = loops.ranges[x] % 128 == 0 && loops.ranges[y] % 128 == 0 &&
                 blocks >= 2 * multiprocessors;
  }
  for (auto [position, loop] : llvm::enumerate(llvm::reverse(loops.mapped))) {
    int64_t range = loops.ranges[loop];
    // Register tiles: one 128-bit vector along x; 4 rows along y for
    // contractions (outer products); 1 elsewhere. Twice that both ways for
    // large contractions.
    int64_t thread =
        position == 0 ? vector : (position == 1 ? params.registerRowsY : 1);
    if (largeTiles && position < 2)
      thread *= 2;
    // Convolutions: GEMM-like register tiles of output columns x output
    // channels (two 128-bit vectors of channels when they are contiguous);
    // the other output loops (rows, depth) one at a time.
    if (conv) {
      if (llvm::is_contained(conv->outputChannel, loop))
        thread = position == 0 ? 2 * vector : 4;
      else if (!conv->outputImage.empty() && loop == conv->outputImage.back())
        thread = position == 0 ? vector : 4;
      else
        thread = 1;
    }
    thread = std::min(thread, range);
    int64_t cap =
        params.maxThreadsX > 0 && position == 0 && loops.mapped.size() > 1
            ? params.maxThreadsX
            : budget;
    int64_t threads = std::min<int64_t>(
        {cap, budget,
         int64_t(llvm::PowerOf2Ceil(llvm::divideCeil(range, thread))),
         position == 2 ? 64 : 1024});
    // Block tiles divide their loops: with few divisors (a prime factor
    // of 87383 in a 262149-long loop) the block tile can be far smaller
    // than planned. The threads it leaves unused go to the outer loops,
    // instead of blocks of one thread.
    SmallVector<int64_t> blockChoices =
        blockCandidates(range, params.maxBlockTile);
    int64_t block = blockChoices[largestDivisorChoice(
        blockChoices, range, std::min(range, thread * threads))];
    SmallVector<int64_t> threadChoices = tileCandidates(range, thread);
    int64_t used =
        block / threadChoices[largestDivisorChoice(threadChoices, block,
                                                   thread)];
    if (2 * used <= threads)
      threads = std::max<int64_t>(1, used);
    budget = std::max<int64_t>(1, budget / threads);
    threadDefaults.insert(threadDefaults.begin(), thread);
    blockDefaults.insert(blockDefaults.begin(),
                         std::min(range, thread * threads));
  }
  int64_t maxBlock = params.maxBlockTile;
  SmallVector<int64_t> chosenBlocks;
  for (auto [i, loop] : llvm::enumerate(loops.mapped)) {
    Knob block{loopKnobName("block", loop),
               blockCandidates(loops.ranges[loop], maxBlock), 0};
    block.defaultIndex = largestDivisorChoice(
        block.choices, loops.ranges[loop], blockDefaults[i]);
    chosenBlocks.push_back(block.choices[block.defaultIndex]);
    space.knobs.push_back(block);
  }
  for (auto [i, loop] : llvm::enumerate(loops.mapped)) {
    bool innermost = i + 1 == loops.mapped.size();
    int64_t maxThread =
        params.maxThreadTile.value_or(innermost ? 2 * vector : 4);
    Knob thread{loopKnobName("thread", loop),
                tileCandidates(loops.ranges[loop], maxThread), 0};
    // Thread tiles that divide the block tile: full register tiles only.
    thread.defaultIndex = largestDivisorChoice(thread.choices, chosenBlocks[i],
                                               threadDefaults[i]);
    // Keep the block within the thread limit when the divisor is small.
    while (thread.defaultIndex + 1 < thread.choices.size() &&
           chosenBlocks[i] / thread.choices[thread.defaultIndex] > 1024 &&
           chosenBlocks[i] % thread.choices[thread.defaultIndex + 1] == 0)
      ++thread.defaultIndex;
    space.knobs.push_back(thread);
  }
  unsigned numMapped = loops.mapped.size();
  // The y and z grid dimensions hold at most 65535 blocks (x far more): an
  // outer loop of 65536 rows needs block tiles of at least two rows. Grow
  // such a block tile to the smallest choice that fits, with one-row
  // register tiles so the extra rows become threads.
  for (unsigned i = 0; i + 1 < numMapped; ++i) {
    Knob &b = space.knobs[i], &t = space.knobs[numMapped + i];
    int64_t range = loops.ranges[loops.mapped[i]];
    while (b.defaultIndex + 1 < b.choices.size() &&
           range / b.choices[b.defaultIndex] > 65535)
      ++b.defaultIndex;
    t.defaultIndex = largestDivisorChoice(t.choices, b.choices[b.defaultIndex],
                                          t.choices[t.defaultIndex]);
  }
  // Divisible tiles can exceed the block's limits (prime extents leave few
  // divisors): shrink the block tile with the most threads until they fit.
  for (unsigned attempt = 0; attempt < 64 && numMapped > 0; ++attempt) {
    std::string reason;
    KnobSpace partial = space;
    if (succeeded(checkLimits(anchor, target,
                              KnobAssignment(partial, getDefaultIndices(partial)),
                              reason)))
      break;
    unsigned worst = 0;
    int64_t most = -1;
    for (unsigned i = 0; i < numMapped; ++i) {
      const Knob &b = space.knobs[i], &t = space.knobs[numMapped + i];
      int64_t threads = b.choices[b.defaultIndex] / t.choices[t.defaultIndex];
      if (b.defaultIndex > 0 && threads > most) {
        most = threads;
        worst = i;
      }
    }
    if (most < 0)
      break;
    Knob &b = space.knobs[worst], &t = space.knobs[numMapped + worst];
    --b.defaultIndex;
    t.defaultIndex = largestDivisorChoice(t.choices, b.choices[b.defaultIndex],
                                          t.choices[t.defaultIndex]);
  }
  if (conv || params.blocksForUnmappedLoops) {
    // The loops left out of the thread mapping (batch, depth) get blocks of
    // their own: a batch looped over in every thread leaves most of the GPU
    // idle. Beyond three loops split over blocks, blocks are numbered
    // linearly (usesLinearBlocks).
    for (unsigned loop : loops.parallel) {
      int64_t range = loops.ranges[loop];
      if (llvm::is_contained(loops.mapped, loop) || range <= 1)
        continue;
      SmallVector<int64_t> choices = blockCandidates(range, range);
      space.knobs.push_back(Knob{loopKnobName("block", loop), choices, 0});
    }
  }
  if (params.reductionKnobs && loops.innerReduction) {
    unsigned k = *loops.innerReduction;
    int64_t range = loops.ranges[k];
    Knob kvec{loopKnobName("kvec", k), tileCandidates(range, 16), 0};
    kvec.defaultIndex = largestDivisorChoice(kvec.choices, range, 4);
    space.knobs.push_back(kvec);
    if (canPromote(op)) {
      Knob stage{loopKnobName("kblock", k), stageCandidates(range), 0};
      stage.defaultIndex = nearestChoice(stage.choices, 16);
      space.knobs.push_back(stage);
      space.knobs.push_back(Knob{"promote", {0, 1}, 0});
      // Staging through shared memory by default wherever it is allowed.
      KnobIndices defaults = getDefaultIndices(space);
      defaults.back() = 1;
      std::string reason;
      if (succeeded(checkLimits(anchor, target,
                                KnobAssignment(space, defaults), reason)))
        space.knobs.back().defaultIndex = 1;
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] staging through shared "
                 << "memory by default: "
                 << (space.knobs.back().defaultIndex ? "yes" : reason) << "\n");
    }
  }
  LLVM_DEBUG(
      llvm::dbgs() << "[" DEBUG_TYPE "] " << getName() << " on "
                   << anchor->getName() << ": " << (conv ? "convolution " : "")
                   << "defaults "
                   << KnobAssignment(space, getDefaultIndices(space)).str()
                   << "\n");
  return space;
}

LogicalResult GpuTilingRule::checkLimits(Operation *anchor,
                                         const TargetDescription &target,
                                         const KnobAssignment &knobs,
                                         std::string &reason) const {
  auto op = cast<linalg::LinalgOp>(anchor);
  GpuLoops loops = analyzeGpuLoops(op);
  GpuTileSizes sizes = tileSizesFor(op, loops, knobs);
  if (failed(checkBlockLimits(target, sizes.dims,
                              estimateRegisters(loops, sizes), reason)))
    return failure();
  SmallVector<int64_t> counts =
      blockCounts(loops, sizes, blockLoops(op, loops, sizes));
  if (usesLinearBlocks(counts)) {
    int64_t total = linearBlockCount(counts);
    if (total > kMaxLinearBlocks) {
      reason = llvm::formatv("{0} blocks exceed the grid's {1}", total,
                             kMaxLinearBlocks);
      return failure();
    }
  }
  for (unsigned loop : loops.mapped) {
    if (loops.ranges[loop] % sizes.block[loop] != 0) {
      reason = "block tiles must divide the loops (partial block tiles are "
               "not padded yet)";
      return failure();
    }
    // A partial register tile cannot be vectorized, and its accumulator
    // would be a dynamically sized buffer inside the kernel.
    if (hasReductionLoop(loops) && sizes.block[loop] % sizes.thread[loop] != 0) {
      reason = "thread tiles must divide the block tiles of a reduction";
      return failure();
    }
  }
  for (unsigned loop : blockLoops(op, loops, sizes))
    if (loops.ranges[loop] % sizes.block[loop] != 0) {
      reason = "block tiles must divide the loops (partial block tiles are "
               "not padded yet)";
      return failure();
    }
  if (loops.innerReduction && sizes.inner[*loops.innerReduction] > 1) {
    unsigned k = *loops.innerReduction;
    int64_t extent = sizes.promote ? sizes.stage[k] : loops.ranges[k];
    if (extent % sizes.inner[k] != 0) {
      reason = "kvec must divide the reduction (or its stage)";
      return failure();
    }
  }
  if (!sizes.promote)
    return success();
  // Staged tiles are copied without padding: they must be full.
  for (unsigned loop : loops.mapped)
    if (loops.ranges[loop] % sizes.block[loop] != 0 ||
        sizes.block[loop] % sizes.thread[loop] != 0) {
      reason = "shared-memory staging needs block tiles that divide the "
               "loops and thread tiles that divide the block tiles";
      return failure();
    }
  unsigned k = *loops.innerReduction;
  if (loops.ranges[k] % sizes.stage[k] != 0) {
    reason = "shared-memory staging needs a stage that divides the reduction";
    return failure();
  }
  int64_t bytes = stagedBytes(op, loops, sizes);
  if (uint64_t(bytes) > staticSharedMemoryLimit(target)) {
    reason = llvm::formatv("{0} bytes of staged inputs exceed the {1} bytes "
                           "of static shared memory",
                           bytes, staticSharedMemoryLimit(target));
    return failure();
  }
  return success();
}

std::string GpuTilingRule::emitScript(Operation *anchor,
                                      const TargetDescription &target,
                                      const KnobAssignment &knobs) const {
  auto op = cast<linalg::LinalgOp>(anchor);
  GpuLoops loops = analyzeGpuLoops(op);
  GpuTileSizes sizes = tileSizesFor(op, loops, knobs);
  unsigned n = loops.ranges.size();

  ScriptWriter w;
  w.comment("sketch " + getName().str() + ": " + knobs.str());
  KernelHandles kernel = matchKernel(w, anchor);
  std::string current = kernel.anchor, consumer = kernel.consumer,
              producers = kernel.producers;
  const KernelNeighbours &neighbours = kernel.neighbours;
  bool mapped = !loops.mapped.empty();
  SmallVector<unsigned> blocks = blockLoops(op, loops, sizes);
  SmallVector<int64_t> counts = blockCounts(loops, sizes, blocks);
  bool linear = usesLinearBlocks(counts);
  std::optional<std::array<int64_t, 3>> grid;
  if (linear)
    grid = std::array<int64_t, 3>{linearBlockCount(counts), 1, 1};

  if (mapped) {
    std::string forall;
    if (neighbours.consumer) {
      w.comment("S: block tiles of the consumer, the anchor fused into them");
      SmallVector<unsigned> tiled;
      SmallVector<int64_t> tiles = mapToConsumer(
          op, neighbours.consumer, blockForallTiles(sizes, blocks), &tiled);
      consumer = tileUsingForallMapped(
          w, consumer, tiles, blockMapping(blocks, tiled, linear), forall);
      w.fuseInto(current, forall);
    } else {
      w.comment("S: block tiles");
      current = tileUsingForallMapped(w, current, blockForallTiles(sizes, blocks),
                                      blockMapping(blocks, blocks, linear),
                                      forall);
    }
    if (neighbours.hasProducers) {
      w.comment("the fills of the anchor's inits, per block tile");
      w.fuseInto(producers, forall);
    }

    if (sizes.promote) {
      w.comment("R: stages of the reduction, inputs copied to shared memory");
      SmallVector<std::string> stageLoops;
      current = w.tileUsingFor(current, sizes.stage, stageLoops);
      SmallVector<std::string> zeros;
      SmallVector<int64_t> dims, nofold;
      for (OpOperand &operand : op->getOpOperands()) {
        Type type = getElementTypeOrSelf(operand.get().getType());
        zeros.push_back(isa<FloatType>(type) ? "0.0 : " + typeName(type)
                                             : "0 : " + typeName(type));
        nofold.push_back(op.isDpsInput(&operand) ? 1 : 0);
      }
      for (unsigned loop = 0; loop < n; ++loop)
        dims.push_back(loop);
      std::string padded = w.fresh("op");
      w.line(llvm::formatv(
          "{0}, {1}, {2} = transform.structured.pad {3} {{padding_values = "
          "[{4}], padding_dimensions = {5}, nofold_flags = {6}, copy_back_op "
          "= \"none\"} : (!transform.any_op) -> (!transform.any_op, "
          "!transform.any_op, !transform.any_op)",
          padded, w.fresh("pad"), w.fresh("copy"), current,
          llvm::join(zeros, ", "), ScriptWriter::list(dims),
          ScriptWriter::list(nofold)));
      current = padded;
      int64_t threads = sizes.dims[0] * sizes.dims[1] * sizes.dims[2];
      unsigned numInputs = op.getNumDpsInputs();
      for (unsigned index = 0; index < numInputs; ++index) {
        std::string producer = w.fresh("operand");
        w.line(llvm::formatv("{0} = transform.get_producer_of_operand "
                             "{1}[{2}] : (!transform.any_op) -> "
                             "!transform.any_op",
                             producer, current, index));
        w.bufferizeDestination(producer, kWorkgroup, "linalg.copy");
      }
      // The copies, one per input in operand order, each spread over the
      // block's threads.
      std::string copies = w.fresh("copies");
      w.line(copies + " = transform.structured.match ops{[\"linalg.copy\"]} "
                      "in " +
             forall + " : (!transform.any_op) -> !transform.any_op");
      SmallVector<std::string> copy;
      SmallVector<std::string> types;
      for (unsigned index = 0; index < numInputs; ++index) {
        copy.push_back(w.fresh("copy"));
        types.push_back("!transform.any_op");
      }
      w.line(llvm::join(copy, ", ") + " = transform.split_handle " + copies +
             " : (!transform.any_op) -> (" + llvm::join(types, ", ") + ")");
      for (auto [index, input] : llvm::enumerate(op.getDpsInputOperands())) {
        SmallVector<int64_t> shape =
            stagedOperandShape(op, input, loops, sizes);
        unsigned bits =
            getElementTypeOrSelf(input->get().getType()).getIntOrFloatBitWidth();
        SmallVector<int64_t> tiles =
            copyTiles(shape, threads, vectorElements(std::max(8u, bits)));
        SmallVector<std::string> ids;
        unsigned next = llvm::count_if(tiles, [](int64_t t) { return t != 0; });
        for (int64_t tile : tiles)
          if (tile != 0)
            ids.push_back("#gpu.thread<linear_dim_" + std::to_string(--next) +
                          ">");
        if (ids.empty())
          continue; // one thread's worth: nothing to spread
        std::string copyForall;
        w.comment("cooperative, vector-wide copy by all threads of the block");
        tileUsingForallMapped(w, copy[index], tiles,
                              "[" + llvm::join(ids, ", ") + "]", copyForall);
      }
    }

    if (neighbours.consumer && !sizes.promote) {
      // Fusing at thread level keeps the anchor's tile in the thread's
      // registers: tiled on its own, its block tile would go through a
      // buffer, and a strided thread tile of it through memref.copy, which
      // a GPU kernel cannot call.
      w.comment("S: thread tiles of the consumer, the anchor (and its fills) "
                "fused into them");
      SmallVector<unsigned> tiled;
      SmallVector<int64_t> tiles =
          mapToConsumer(op, neighbours.consumer, sizes.thread, &tiled);
      std::string threadForall;
      consumer = tileUsingForallMapped(w, consumer, tiles,
                                       mappingList("thread", loops, tiled),
                                       threadForall);
      w.fuseInto(current, threadForall);
      if (neighbours.hasProducers)
        w.fuseInto(producers, threadForall);
      // Parallel loops left out of the thread mapping (the batch; the
      // channels and depth of a channels-first convolution) run one step at
      // a time in each thread. Step the consumer through them too, with the
      // anchor fused in, so that a thread's accumulator is one register
      // tile: vectorized whole, a 3-D convolution's consumer held 16 x 64
      // register tiles per thread and ptxas ran for minutes.
      SmallVector<int64_t> steps = perThreadParallelSteps(loops, sizes);
      if (llvm::any_of(steps, [](int64_t t) { return t != 0; })) {
        w.comment("the unmapped parallel loops, one step at a time, the "
                  "anchor (and its fills) fused into each step");
        SmallVector<std::string> stepLoops;
        consumer = w.tileUsingFor(
            consumer, mapToConsumer(op, neighbours.consumer, steps), stepLoops);
        w.fuseIntoLoop(current, stepLoops.back());
        if (neighbours.hasProducers)
          w.fuseIntoLoop(producers, stepLoops.back());
      }
    } else {
    w.comment("S: thread tiles, one register tile per thread");
    SmallVector<unsigned> tiled;
    if (neighbours.hasProducers) {
      SmallVector<int64_t> tiles = mapToResult(op, sizes.thread, &tiled);
      std::string forall;
      tileUsingForallMapped(w, producers, tiles,
                            mappingList("thread", loops, tiled), forall);
    }
    std::string threadForall;
    current = tileUsingForallMapped(w, current, sizes.thread,
                                    mappingList("thread", loops, loops.mapped),
                                    threadForall);
    if (neighbours.consumer) {
      tiled.clear();
      SmallVector<int64_t> tiles =
          mapToConsumer(op, neighbours.consumer, sizes.thread, &tiled);
      std::string forall;
      consumer = tileUsingForallMapped(w, consumer, tiles,
                                       mappingList("thread", loops, tiled),
                                       forall);
    }
    }
  }
  if (llvm::any_of(sizes.inner, [](int64_t t) { return t != 0; })) {
    w.comment("R: the remaining loops of a thread's tile, kvec of the "
              "innermost reduction at a time");
    SmallVector<std::string> innerLoops;
    current = w.tileUsingFor(current, sizes.inner, innerLoops);
    std::optional<linalg::ConvolutionDimensions> conv = convDims(op);
    // decompose needs a single filter row and output row: inner tiles of 1
    // (or loops of 1 iteration); the filter columns may stay whole.
    auto single = [&](unsigned loop) {
      return sizes.inner[loop] == 1 || loops.ranges[loop] == 1 ||
             (sizes.inner[loop] == 0 && sizes.thread[loop] == 1);
    };
    if (conv && isDecomposable(op) && conv->filterLoop.size() == 2 &&
        conv->outputImage.size() == 2 && single(conv->filterLoop.front()) &&
        single(conv->outputImage.front())) {
      w.comment("one output row and one filter row per step: a 1-D "
                "convolution, which the vectorizer handles");
      std::string decomposed = w.fresh("op");
      w.line(decomposed + " = transform.structured.decompose " + current +
             " : (!transform.any_op) -> !transform.any_op");
      current = decomposed;
    }
  }
  emitGpuEpilogue(w, sizes.dims, mapped, /*eliminateBarriers=*/false, grid);
  return w.finish();
}

LoopNestDescription
GpuTilingRule::describeLoopNest(Operation *anchor,
                                const TargetDescription &target,
                                const KnobAssignment &knobs) const {
  auto op = cast<linalg::LinalgOp>(anchor);
  GpuLoops loops = analyzeGpuLoops(op);
  GpuTileSizes sizes = tileSizesFor(op, loops, knobs);
  LoopNestDescription d;
  d.ranges = loops.ranges;
  d.reduction.assign(loops.ranges.size(), false);
  for (unsigned loop : loops.reduction)
    d.reduction[loop] = true;
  bool mapped = !loops.mapped.empty();
  d.addLevel(TileLevelRole::Threads, sizes.block, /*parallel=*/mapped);
  if (sizes.promote)
    d.addLevel(TileLevelRole::Cache, sizes.stage, /*parallel=*/false);
  d.addLevel(TileLevelRole::Register, sizes.thread, /*parallel=*/mapped);
  d.addLevel(TileLevelRole::Inner, sizes.inner, /*parallel=*/false);
  d.threads = sizes.dims[0] * sizes.dims[1] * sizes.dims[2];
  // Partial tiles are neither peeled nor padded (PartialTileHandling::None,
  // the default): they run as scalar code.
  // Each thread's tile is vectorized along the innermost mapped loop.
  if (mapped) {
    d.vectorLoop = loops.mapped.back();
    d.vectorWidth = sizes.thread[loops.mapped.back()];
  }
  return d;
}

//===- GpuTiling.h - Block/thread tiling shared by two GPU rules -*- C++ -*-===//
//
// gpu.tile (contractions, convolutions) and gpu.elementwise (everything
// else) build the same nest: block tiles of the mapped parallel loops
// (scf.forall on #gpu.block), optionally a reduction stage staged through
// shared memory, thread tiles (scf.forall on #gpu.thread) that each thread
// computes as one register tile, and inner scf.for tiles of the remaining
// loops. They differ in their knobs and defaults.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_SKETCH_GPUTILING_H
#define KE_LIB_SKETCH_GPUTILING_H

#include "GpuSupport.h"

#include <optional>

namespace ke {

/// The tile sizes of an assignment, by anchor loop (0: not tiled), shared by
/// the script, the limits and the loop-nest description.
struct GpuTileSizes {
  llvm::SmallVector<int64_t> block, thread, inner;
  /// Reduction stage through shared memory (only with `promote`).
  llvm::SmallVector<int64_t> stage;
  bool promote = false;
  /// Threads along each mapped loop, and the block's [x, y, z].
  llvm::SmallVector<int64_t> threads;
  std::array<int64_t, 3> dims{1, 1, 1};
};

/// What sets one rule's block/thread tiling apart from the other's: its
/// knobs and their defaults. The nest itself is the same.
struct GpuTilingParams {
  /// Convolutions get their own knobs and defaults: GEMM-like register
  /// tiles of output columns by channels, block knobs for the parallel
  /// loops left out of the thread mapping (batch, depth).
  bool convolutionKnobs = false;
  /// Large 2-D mapped nests get 8x8 register tiles (128x128 blocks) where
  /// that still leaves two blocks per multiprocessor.
  bool largeRegisterTiles = false;
  /// Default register tile along y (outer products want several rows).
  int64_t registerRowsY = 1;
  /// Most threads along x by default when a y loop is mapped too (0: only
  /// the block's thread budget limits them).
  int64_t maxThreadsX = 0;
  /// Largest block tile candidate.
  int64_t maxBlockTile = 1024;
  /// Largest thread tile candidate on every mapped loop; none: up to two
  /// 128-bit vectors along x and 4 elements on the other loops.
  std::optional<int64_t> maxThreadTile;
  /// kvec, kblock and promote knobs on the innermost reduction (register
  /// tiles of the reduction, shared-memory stages).
  bool reductionKnobs = false;
  /// Block knobs (default: one iteration per block) for every parallel loop
  /// left out of the thread mapping, as convolutions have. Without them each
  /// thread loops over those outer loops: a 5-D fill of 16 x 64 x 36^3
  /// ran on 72 blocks, each thread storing 6144 elements.
  bool blocksForUnmappedLoops = false;

  /// gpu.tile's: register tiles on two loops, kvec, promotion.
  static GpuTilingParams forContractions();
  /// gpu.elementwise's: vector-wide thread tiles, large blocks.
  static GpuTilingParams forElementwise();
};

class GpuTilingRule : public SketchRule {
public:
  explicit GpuTilingRule(const GpuTilingParams &params) : params(params) {}

  KnobSpace getKnobSpace(mlir::Operation *anchor,
                         const TargetDescription &target) const override;
  mlir::LogicalResult checkLimits(mlir::Operation *anchor,
                                  const TargetDescription &target,
                                  const KnobAssignment &knobs,
                                  std::string &reason) const override;
  std::string emitScript(mlir::Operation *anchor,
                         const TargetDescription &target,
                         const KnobAssignment &knobs) const override;
  LoopNestDescription
  describeLoopNest(mlir::Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override;

protected:
  /// True when the anchor may stage its inputs through shared memory: one
  /// reduction loop, inputs read through projected permutations.
  static bool canPromote(mlir::linalg::LinalgOp op);

private:
  GpuTilingParams params;
};

GpuTileSizes getGpuTileSizes(const GpuLoops &loops,
                             const KnobAssignment &knobs);

} // namespace ke

#endif // KE_LIB_SKETCH_GPUTILING_H

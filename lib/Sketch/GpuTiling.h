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

#include "GpuRules.h"

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

class GpuTilingRule : public SketchRule {
public:
  /// `contractions` selects gpu.tile's knobs (register tiles on two loops,
  /// kvec, promotion) over gpu.elementwise's (vector-wide thread tiles).
  explicit GpuTilingRule(bool contractions) : contractions(contractions) {}

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
  bool contractions;
};

GpuTileSizes getGpuTileSizes(const GpuLoops &loops,
                             const KnobAssignment &knobs);

} // namespace ke

#endif // KE_LIB_SKETCH_GPUTILING_H

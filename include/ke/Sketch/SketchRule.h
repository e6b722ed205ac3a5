//===- SketchRule.h - Schedule templates with named knobs -------*- C++ -*-===//
//
// A sketch rule recognizes the workloads it applies to, lists the knobs of
// its sketch for a given workload and target, rejects knob assignments the
// target's limits rule out, and emits the transform script (a module with
// @__transform_main) for an assignment. Rules are small classes registered
// per target family in SketchRegistry.cpp; docs/sketches.md describes each.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SKETCH_SKETCHRULE_H
#define KE_SKETCH_SKETCHRULE_H

#include "ke/Sketch/KnobSpace.h"
#include "ke/Target/Target.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

#include <optional>
#include <string>

namespace ke {

/// What one tiling level of a scheduled loop nest is for. Levels of
/// different sketches with the same role are comparable (cost-model features
/// line them up by role).
enum class TileLevelRole {
  Threads,  ///< tiles handed to threads (scf.forall)
  Cache,    ///< blocks meant to stay in cache
  Register, ///< tiles held in vector registers
  Inner     ///< the innermost tile: one straight-line vector computation
};

/// One tiling level: the iteration box each iteration of its loops hands to
/// the levels inside.
struct TileLevel {
  TileLevelRole role = TileLevelRole::Threads;
  /// Extent of the box along each anchor loop (at most the enclosing
  /// level's extent; equal to it where this level does not tile the loop).
  llvm::SmallVector<int64_t> tile;
  /// Iterations of this level's loop over each anchor loop within one full
  /// enclosing box: ceil(enclosing / tile), 1 where the loop is not tiled.
  llvm::SmallVector<int64_t> tripCounts;
  /// True when the level's iterations run on threads.
  bool parallel = false;
};

/// How tiles that do not divide their loop evenly are computed.
enum class PartialTileHandling {
  None,   ///< left as they are (dynamic shapes, usually scalar code)
  Peeled, ///< split off into remainder loops (transform.loop.peel)
  Padded  ///< padded to full tiles (masked vector reads)
};

/// The loop nest a schedule's script builds, in terms of the anchor's loops
/// (linalg loop order; the tensor dimensions for linalg.softmax). Cost-model
/// features are computed from it (ke/Search/Features.h).
struct LoopNestDescription {
  /// Iterations of each anchor loop.
  llvm::SmallVector<int64_t> ranges;
  /// True for the reduction loops (for softmax: the softmax dimension).
  llvm::SmallVector<bool> reduction;
  /// Tiling levels, outermost first.
  llvm::SmallVector<TileLevel> levels;
  /// Threads the parallel level runs on.
  int64_t threads = 1;
  /// The anchor loop along which the innermost vector dimension runs, if
  /// anything is vectorized.
  std::optional<unsigned> vectorLoop;
  /// Elements of the innermost vector dimension: the innermost tile's extent
  /// along `vectorLoop`.
  int64_t vectorWidth = 1;
  /// Unroll factor of the loop over inner tiles (1: not unrolled).
  int64_t unroll = 1;
  PartialTileHandling partialTiles = PartialTileHandling::None;
  /// How a GPU contraction's shared tiles are filled: by the threads'
  /// loads, by cp.async, or by TMA bulk copies (gpu.wgmma's `tma`).
  enum class TileCopy { Loads, CpAsync, Tma };
  TileCopy tileCopy = TileCopy::Loads;
  /// Shared tiles in flight (a GPU contraction's `stages`; 1 without a
  /// pipeline).
  int64_t pipelineStages = 1;
  /// Block tile rows rasterized together (a GPU contraction's `group.m`;
  /// 1: row-major).
  int64_t rasterGroup = 1;

  /// Appends a level that tiles each anchor loop by `sizes` (the convention
  /// of transform tile_sizes: 0 leaves the loop untiled), computing its tile
  /// extents and trip counts from the enclosing level (or the ranges).
  void addLevel(TileLevelRole role, llvm::ArrayRef<int64_t> sizes,
                bool parallel);
  /// The level with `role`, or null when the sketch has none.
  const TileLevel *findLevel(TileLevelRole role) const;
  /// True when the rule described nothing (the default implementation).
  bool empty() const { return ranges.empty() && levels.empty(); }
};

/// One sketch rule. Stateless: one instance serves every workload.
class SketchRule {
public:
  virtual ~SketchRule() = default;

  /// Stable identifier stored with schedules, e.g. "cpu.tile".
  virtual llvm::StringRef getName() const = 0;

  /// True when the rule can schedule `anchor` (an op inside a kernel module,
  /// see ke/Workload/Kernel.h) on `target`.
  virtual bool matches(mlir::Operation *anchor,
                       const TargetDescription &target) const = 0;

  /// Whether the rule's untuned default should be `anchor`'s default
  /// schedule where the rule matches. A rule that is fast only on some
  /// shapes says no elsewhere: the next matching rule that says yes gives
  /// the default instead (the first matching rule when none does), and the
  /// search still samples this one.
  virtual bool prefersDefault(mlir::Operation *anchor,
                              const TargetDescription &target) const {
    return true;
  }

  /// The knobs for `anchor` on `target`, with defaults that make a sound
  /// untuned schedule.
  virtual KnobSpace getKnobSpace(mlir::Operation *anchor,
                                 const TargetDescription &target) const = 0;

  /// Checks an assignment against the target's limits before anything is
  /// compiled; on failure `reason` says which limit.
  virtual mlir::LogicalResult
  checkLimits(mlir::Operation *anchor, const TargetDescription &target,
              const KnobAssignment &knobs, std::string &reason) const {
    return mlir::success();
  }

  /// The transform script for `knobs`, as MLIR text.
  virtual std::string emitScript(mlir::Operation *anchor,
                                 const TargetDescription &target,
                                 const KnobAssignment &knobs) const = 0;

  /// The loop nest that emitScript builds for `knobs`: its tiling levels,
  /// threads, vector width, unrolling and partial tiles. Rules derive it
  /// from the same tile sizes as their script. The default describes
  /// nothing (cost-model features then mark the loop nest as unknown).
  virtual LoopNestDescription
  describeLoopNest(mlir::Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const {
    return {};
  }
};

/// The rules of `family`, most specific first.
llvm::ArrayRef<const SketchRule *> getSketchRules(TargetFamily family);

/// True when `rule` matches `anchor` on `target` and every one of its knobs
/// has at least one choice (a rule whose knob space is empty for this op
/// cannot make a schedule, so it does not apply).
bool ruleApplies(const SketchRule &rule, mlir::Operation *anchor,
                 const TargetDescription &target);

/// The rule that gives `anchor`'s untuned default: the first of the
/// target's family that applies and prefers it (SketchRule::prefersDefault),
/// else the first that applies, else null.
const SketchRule *selectSketchRule(mlir::Operation *anchor,
                                   const TargetDescription &target);

/// The rule called `name`, or null.
const SketchRule *findSketchRule(llvm::StringRef name);

} // namespace ke

#endif // KE_SKETCH_SKETCHRULE_H

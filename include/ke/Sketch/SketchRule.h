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

#include <string>

namespace ke {

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
};

/// The rules of `family`, most specific first.
llvm::ArrayRef<const SketchRule *> getSketchRules(TargetFamily family);

/// The first rule of the target's family that matches, or null.
const SketchRule *selectSketchRule(mlir::Operation *anchor,
                                   const TargetDescription &target);

/// The rule called `name`, or null.
const SketchRule *findSketchRule(llvm::StringRef name);

} // namespace ke

#endif // KE_SKETCH_SKETCHRULE_H

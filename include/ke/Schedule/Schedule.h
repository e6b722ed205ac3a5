//===- Schedule.h - A sketch plus knob values -------------------*- C++ -*-===//
//
// A schedule is a sketch rule and one value per knob. It is stored as the
// rule's name and the knob values (so it can be rebuilt exactly, even after
// the rule's candidate lists change), and it is applied as the transform
// script the rule emits for those values.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SCHEDULE_SCHEDULE_H
#define KE_SCHEDULE_SCHEDULE_H

#include "ke/Sketch/SketchRule.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/JSON.h"

#include <random>

namespace ke {

/// A sketch rule and an assignment of its knobs for one anchor and target.
struct Schedule {
  const SketchRule *rule = nullptr;
  KnobSpace space;
  KnobIndices indices;

  KnobAssignment getAssignment() const { return {space, indices}; }
  /// The transform script, as text. Deterministic.
  std::string getScript(mlir::Operation *anchor,
                        const TargetDescription &target) const;
  /// {"sketch": name, "knobs": {name: value, ...}}.
  llvm::json::Value toJSON() const;
  /// "rule {knob=value ...}", as remarks name a schedule.
  std::string describe() const;
};

/// The untuned default schedule of `anchor`, or failure with a remark at
/// the anchor when no rule of the target's family matches.
mlir::FailureOr<Schedule> getDefaultSchedule(mlir::Operation *anchor,
                                             const TargetDescription &target);

/// The default schedule of every rule that matches `anchor`, the rule
/// getDefaultSchedule picks first. Empty when none matches.
llvm::SmallVector<Schedule> getCandidateSketches(mlir::Operation *anchor,
                                                const TargetDescription &target);

/// Rebuilds a schedule from its JSON form: the rule by name, each knob value
/// looked up among the current candidates. Fails with a message when the
/// rule, a knob or a value is unknown.
llvm::Expected<Schedule> scheduleFromJSON(const llvm::json::Value &value,
                                          mlir::Operation *anchor,
                                          const TargetDescription &target);

/// scheduleFromJSON for a sketch name and its knob values as JSON object
/// text, the form tuning records store them in.
llvm::Expected<Schedule> scheduleFromKnobsText(llvm::StringRef sketch,
                                               llvm::StringRef knobs,
                                               mlir::Operation *anchor,
                                               const TargetDescription &target);

/// Parses a transform script into a module in `context`.
mlir::OwningOpRef<mlir::ModuleOp> parseScript(llvm::StringRef script,
                                              mlir::MLIRContext *context);

/// Draws random knob assignments within the target's limits.
class Sampler {
public:
  explicit Sampler(uint64_t seed) : rng(seed) {}

  /// A uniformly random assignment that passes the rule's limits, or
  /// std::nullopt after `maxTries` rejected draws. Counts rejections.
  std::optional<KnobIndices> sample(const Schedule &base,
                                    mlir::Operation *anchor,
                                    const TargetDescription &target,
                                    unsigned maxTries = 1000);

  /// A random sketch among `sketches` (uniformly), then a random assignment
  /// of its knobs as `sample` draws it.
  std::optional<Schedule> sampleAny(llvm::ArrayRef<Schedule> sketches,
                                    mlir::Operation *anchor,
                                    const TargetDescription &target,
                                    unsigned maxTries = 1000);

  /// Draws rejected by the limits so far.
  uint64_t getRejected() const { return rejected; }

private:
  std::mt19937_64 rng;
  uint64_t rejected = 0;
};

} // namespace ke

#endif // KE_SCHEDULE_SCHEDULE_H

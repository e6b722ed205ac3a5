//===- Schedule.cpp - A sketch plus knob values ---------------------------===//
//
// Map of the Schedule component (one file):
//   Schedule::getScript, describe, toJSON   a rule and its knob values, as
//                                           the transform script they write
//   getDefaultSchedule,                     the untuned default (first rule
//     getCandidateSketches                  that matches) and every sketch
//   scheduleFromJSON, scheduleFromKnobsText records and files back to
//                                           schedules (knobs checked against
//                                           the rule's space)
//   parseScript                             script text to a transform module
//   Sampler                                 random knob values (search)
//
//===----------------------------------------------------------------------===//

#include "ke/Schedule/Schedule.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;
using namespace ke;

std::string Schedule::getScript(Operation *anchor,
                                const TargetDescription &target) const {
  return rule->emitScript(anchor, target, getAssignment());
}

std::string Schedule::describe() const {
  return (rule->getName() + " {" + getAssignment().str() + "}").str();
}

llvm::json::Value Schedule::toJSON() const {
  llvm::json::Object knobs;
  for (auto [knob, index] : llvm::zip(space.knobs, indices))
    knobs[knob.name] = knob.choices[index];
  return llvm::json::Object{{"sketch", rule->getName()},
                            {"knobs", std::move(knobs)}};
}

FailureOr<Schedule> ke::getDefaultSchedule(Operation *anchor,
                                           const TargetDescription &target) {
  const SketchRule *rule = selectSketchRule(anchor, target);
  if (!rule) {
    emitRemark(anchor->getLoc())
        << "no " << stringifyTargetFamily(target.family)
        << " sketch rule applies to this op; it keeps the default lowering";
    return failure();
  }
  Schedule schedule;
  schedule.rule = rule;
  schedule.space = rule->getKnobSpace(anchor, target);
  schedule.indices = getDefaultIndices(schedule.space);
  return schedule;
}

SmallVector<Schedule> ke::getCandidateSketches(Operation *anchor,
                                               const TargetDescription &target) {
  SmallVector<Schedule> sketches;
  for (const SketchRule *rule : getSketchRules(target.family)) {
    if (!ruleApplies(*rule, anchor, target))
      continue;
    Schedule schedule;
    schedule.rule = rule;
    schedule.space = rule->getKnobSpace(anchor, target);
    schedule.indices = getDefaultIndices(schedule.space);
    sketches.push_back(std::move(schedule));
  }
  return sketches;
}

llvm::Expected<Schedule> ke::scheduleFromJSON(const llvm::json::Value &value,
                                              Operation *anchor,
                                              const TargetDescription &target) {
  auto fail = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  const llvm::json::Object *object = value.getAsObject();
  std::optional<llvm::StringRef> name =
      object ? object->getString("sketch") : std::nullopt;
  const llvm::json::Object *knobs = object ? object->getObject("knobs") : nullptr;
  if (!name || !knobs)
    return fail("a schedule needs \"sketch\" and \"knobs\"");
  Schedule schedule;
  schedule.rule = findSketchRule(*name);
  if (!schedule.rule)
    return fail("unknown sketch '" + *name + "'");
  if (!ruleApplies(*schedule.rule, anchor, target))
    return fail("sketch '" + *name + "' does not apply to this op");
  schedule.space = schedule.rule->getKnobSpace(anchor, target);
  if (knobs->size() != schedule.space.knobs.size())
    return fail("the schedule has " + llvm::Twine(knobs->size()) +
                " knobs, sketch '" + *name + "' has " +
                llvm::Twine(schedule.space.knobs.size()));
  for (const Knob &knob : schedule.space.knobs) {
    std::optional<int64_t> v = knobs->getInteger(knob.name);
    if (!v)
      return fail("knob '" + knob.name + "' is missing");
    auto it = llvm::find(knob.choices, *v);
    if (it == knob.choices.end())
      return fail("knob '" + knob.name + "' cannot be " + llvm::Twine(*v));
    schedule.indices.push_back(it - knob.choices.begin());
  }
  return schedule;
}

llvm::Expected<Schedule>
ke::scheduleFromKnobsText(llvm::StringRef sketch, llvm::StringRef knobs,
                          Operation *anchor, const TargetDescription &target) {
  llvm::Expected<llvm::json::Value> values = llvm::json::parse(knobs);
  if (!values)
    return values.takeError();
  return scheduleFromJSON(
      llvm::json::Object{{"sketch", sketch}, {"knobs", std::move(*values)}},
      anchor, target);
}

OwningOpRef<ModuleOp> ke::parseScript(llvm::StringRef script,
                                      MLIRContext *context) {
  return parseSourceString<ModuleOp>(script, ParserConfig(context),
                                     "schedule");
}

std::optional<KnobIndices> Sampler::sample(const Schedule &base,
                                           Operation *anchor,
                                           const TargetDescription &target,
                                           unsigned maxTries) {
  for (unsigned attempt = 0; attempt < maxTries; ++attempt) {
    KnobIndices indices;
    for (const Knob &knob : base.space.knobs)
      indices.push_back(
          std::uniform_int_distribution<unsigned>(0, knob.choices.size() - 1)(
              rng));
    std::string reason;
    if (succeeded(base.rule->checkLimits(
            anchor, target, KnobAssignment(base.space, indices), reason)))
      return indices;
    ++rejected;
  }
  return std::nullopt;
}

std::optional<Schedule> Sampler::sampleAny(ArrayRef<Schedule> sketches,
                                           Operation *anchor,
                                           const TargetDescription &target,
                                           unsigned maxTries) {
  // Sketches of a single schedule (cpu.loops), which the tuner measures
  // once up front: drawing them again would only repeat it.
  SmallVector<const Schedule *> withKnobs;
  for (const Schedule &s : sketches)
    if (!s.space.isSingleSchedule())
      withKnobs.push_back(&s);
  if (withKnobs.empty())
    return std::nullopt;
  const Schedule &base = *withKnobs[std::uniform_int_distribution<size_t>(
      0, withKnobs.size() - 1)(rng)];
  std::optional<KnobIndices> indices = sample(base, anchor, target, maxTries);
  if (!indices)
    return std::nullopt;
  Schedule schedule = base;
  schedule.indices = std::move(*indices);
  return schedule;
}

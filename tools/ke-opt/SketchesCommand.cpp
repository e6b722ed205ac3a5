//===- SketchesCommand.cpp - ke-opt sketches ------------------------------===//
//
// Shows what the tuner would search: per workload, every sketch rule that
// matches (or the one --sketch names), its knobs with their candidates (the
// default in brackets) and the transform script for the default knob values,
// or for the values given with --knobs.
//
//===----------------------------------------------------------------------===//

#include "Subcommands.h"
#include "ToolSupport.h"

#include "ke/Schedule/Schedule.h"
#include "ke/TunedSchedules/TunedSchedules.h"
#include "ke/Workload/Kernel.h"
#include "ke/Workload/Workload.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

using namespace mlir;
using namespace ke;
namespace cl = llvm::cl;

static cl::opt<bool> printKernels(
    "print-kernels",
    cl::desc("Also print each workload's kernel module (the payload)"),
    cl::sub(getSketchesCommand()));
static cl::opt<std::string> sketchName(
    "sketch", cl::desc("Only this sketch rule (default: every rule that "
                       "matches, the untuned default's first)"),
    cl::sub(getSketchesCommand()));
static cl::opt<std::string> knobValues(
    "knobs",
    cl::desc("Knob values to emit instead of the defaults: name=value,..."),
    cl::sub(getSketchesCommand()));

/// Applies "name=value,..." to `schedule`; reports unknown names or values.
static LogicalResult applyKnobValues(Schedule &schedule, llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> pairs;
  text.split(pairs, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef pair : pairs) {
    auto [name, valueText] = pair.split('=');
    int index = schedule.space.find(name.trim());
    int64_t value = 0;
    if (index < 0 || valueText.trim().getAsInteger(10, value)) {
      subcommandError("sketches")
          << "bad knob '" << pair << "' for sketch "
          << schedule.rule->getName() << "\n";
      return failure();
    }
    const Knob &knob = schedule.space.knobs[index];
    auto it = llvm::find(knob.choices, value);
    if (it == knob.choices.end()) {
      subcommandError("sketches")
          << "knob " << knob.name << " cannot be " << value << "\n";
      return failure();
    }
    schedule.indices[index] = it - knob.choices.begin();
  }
  return success();
}

int ke::runSketchesCommand() {
  std::optional<TargetDescription> target = parseTargetOption("sketches");
  if (!target)
    return 1;
  if (!requireInputFiles("sketches"))
    return 1;
  std::unique_ptr<MLIRContext> context = createToolContext();
  LoadedInputs inputs = loadInputs(inputFiles, *context);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, context.get());
  bool failedAny = inputs.failed;
  for (const Workload &workload : inputs.workloads) {
    llvm::outs() << "// -----// workload " << workload.key << " "
                 << workload.opName << "\n";
    KernelFusion fusion = getKernelFusion(*target);
    if (Operation *fusing = getFusingAnchor(workload.firstOp, fusion)) {
      llvm::outs() << "// fused into workload " << computeWorkloadKey(fusing)
                   << "\n";
      continue;
    }
    FailureOr<KernelModule> kernel =
        buildKernelModule(workload.firstOp, fusion);
    if (failed(kernel)) {
      failedAny = true;
      continue;
    }
    Operation *anchor = findKernelAnchor(*kernel->module);
    if (printKernels)
      llvm::outs() << *kernel->module << "\n";
    SmallVector<Schedule> sketches = getCandidateSketches(anchor, *target);
    llvm::erase_if(sketches, [](const Schedule &s) {
      return !sketchName.empty() && s.rule->getName() != sketchName;
    });
    if (sketches.empty()) {
      llvm::outs() << "// no sketch rule applies\n";
      continue;
    }
    for (Schedule &schedule : sketches) {
      // A sketch of one schedule (cpu.loops, cpu.loops.parallel) has
      // nothing to set.
      if (!knobValues.empty() && !schedule.space.isSingleSchedule() &&
          failed(applyKnobValues(schedule, knobValues))) {
        failedAny = true;
        continue;
      }
      llvm::outs() << "// sketch " << schedule.rule->getName() << "\n";
      for (const Knob &knob : schedule.space.knobs) {
        llvm::outs() << "// knob " << knob.name << ":";
        for (auto [index, choice] : llvm::enumerate(knob.choices))
          llvm::outs() << (index == knob.defaultIndex ? " [" : " ") << choice
                       << (index == knob.defaultIndex ? "]" : "");
        llvm::outs() << "\n";
      }
      std::string reason;
      if (failed(schedule.rule->checkLimits(anchor, *target,
                                            schedule.getAssignment(), reason)))
        llvm::outs() << "// outside the target's limits: " << reason << "\n";
      llvm::outs() << schedule.getScript(anchor, *target);
    }
  }
  return failedAny ? 1 : 0;
}

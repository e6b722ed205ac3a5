//===- GpuCompile.cpp - Kernel groups to device code on GPUs --------------===//
//
// Each kernel group of the module (a workload's anchor with the ops fused
// into it on GPUs, getKernelFusion) becomes a kernel module of its own,
// gets its schedule from chooseSchedule (ke/TunedSchedules) with a remark
// that says which and why, and is lowered on its own by
// lowerKernelToGpuBinary (ke/Codegen/GpuPipeline.h).
//
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"
#include "ModelPlan.h"

#include "ke/Codegen/CpuPipeline.h"
#include "ke/Codegen/GpuPipeline.h"
#include "ke/TunedSchedules/TunedSchedules.h"
#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace ke;

/// `op` printed.
static std::string print(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << *op;
  return text;
}

/// The public function a model runs: the only public func.func.
static FailureOr<func::FuncOp> getModelFunction(ModuleOp module) {
  func::FuncOp found;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    if (found)
      return module.emitError("ke: a GPU model has one public function; "
                              "this module has @")
             << found.getSymName() << " and @" << func.getSymName();
    found = func;
  }
  if (!found)
    return module.emitError("ke: the module has no public function to run");
  return found;
}

/// The model's shared object, from the kernel groups compiled once per
/// workload: every occurrence of a workload in the public function launches
/// its group's kernels on that occurrence's buffers.
/// What a group anchor's kernel is compiled from: its workload key and the
/// keys of the ops fused with it. Two anchors of one workload can differ in
/// their groups (a consumer that reads a value computed between them joins
/// only the later one), and each group needs a kernel of its own.
static std::string getGroupKey(Operation *anchor, KernelFusion fusion) {
  std::string key = computeWorkloadKey(anchor);
  for (Operation *op : getKernelGroup(anchor, fusion))
    if (op != anchor)
      key += "+" + computeWorkloadKey(op);
  return key;
}

static LogicalResult linkWholeModel(ModuleOp module,
                                    const TargetDescription &target,
                                    KernelFusion fusion,
                                    CompiledModule &compiled) {
  FailureOr<func::FuncOp> func = getModelFunction(module);
  if (failed(func))
    return failure();
  llvm::StringMap<const GpuKernelBinary *> binaryOfKey;
  for (const CompiledGpuKernel &kernel : compiled.gpuKernels)
    binaryOfKey[kernel.groupKey] = &kernel.binary;
  // Every group anchor of the function, with its group.
  std::vector<std::pair<Operation *, llvm::SmallVector<Operation *>>> anchors;
  func->walk([&](Operation *op) {
    if (isWorkloadAnchor(op) && !getFusingAnchor(op, fusion))
      anchors.emplace_back(op, getKernelGroup(op, fusion));
  });
  std::vector<KernelModule> kernels;
  kernels.reserve(anchors.size()); // groups point into it
  std::vector<PlannedGroup> groups;
  for (auto &[anchor, ops] : anchors) {
    const GpuKernelBinary *binary =
        binaryOfKey.lookup(getGroupKey(anchor, fusion));
    if (!binary)
      return anchor->emitError("ke: this op's kernel was not compiled");
    FailureOr<KernelModule> kernel = buildKernelModule(anchor, fusion);
    if (failed(kernel))
      return failure();
    kernels.push_back(std::move(*kernel));
    groups.push_back({ops, &kernels.back(), binary});
  }
  FailureOr<std::string> blob =
      buildModelBlob(*func, groups, target, getPipelineHash(target));
  if (failed(blob))
    return failure();
  FailureOr<std::string> library = linkModelLibrary(module, *blob);
  if (failed(library))
    return failure();
  compiled.sharedLibrary = std::move(*library);
  return success();
}

FailureOr<CompiledModule>
ke::compileModuleForGpu(ModuleOp module, const TargetDescription &target,
                        const CompileOptions &options) {
  llvm::Expected<std::unique_ptr<TuningDatabase>> database =
      openScheduleDatabase(options.databasePath);
  if (!database)
    return module.emitError("ke: ") << llvm::toString(database.takeError());
  KernelFusion fusion = getKernelFusion(target);
  std::vector<Workload> workloads;
  collectWorkloads(module, workloads);

  // Every group anchor of each workload whose group differs from the
  // earlier ones' (usually only the first). Fills and consumers fused into
  // another workload's kernel are compiled as part of it; a workload can be
  // fused at one occurrence and a group of its own at another (GroupNorm's
  // two row sums), so this goes by occurrence, not by the workload's first.
  llvm::StringMap<SmallVector<Operation *>> groupAnchors;
  llvm::StringSet<> groupKeys;
  module.walk([&](Operation *op) {
    if (isWorkloadAnchor(op) && !getFusingAnchor(op, fusion) &&
        groupKeys.insert(getGroupKey(op, fusion)).second)
      groupAnchors[computeWorkloadKey(op)].push_back(op);
  });
  if (groupAnchors.empty())
    return module.emitError("ke: the module has no workload to compile for ")
           << target.name;

  CompiledModule compiled;
  for (const Workload &workload : workloads)
    for (Operation *groupAnchor : groupAnchors.lookup(workload.key)) {
      FailureOr<KernelModule> kernel = buildKernelModule(groupAnchor, fusion);
      if (failed(kernel))
        return failure();
      Operation *anchor = findKernelAnchor(*kernel->module);
      llvm::Expected<std::optional<ChosenSchedule>> chosen = chooseSchedule(
          database->get(), options.databasePath, anchor, workload.key, target);
      if (!chosen)
        return groupAnchor->emitError("ke: ")
               << llvm::toString(chosen.takeError());
      // No GPU rule applies (getDefaultSchedule remarked): the op has no GPU
      // lowering without one.
      if (!*chosen)
        return groupAnchor->emitError("ke: no ")
               << stringifyTargetFamily(target.family)
               << " sketch rule applies to " << workload.opName;
      emitRemark(groupAnchor->getLoc(),
                 (*chosen)->getRemark(options.databasePath));
      const Schedule &schedule = (*chosen)->schedule;
      OwningOpRef<ModuleOp> script =
          parseScript(schedule.getScript(anchor, target), module.getContext());
      if (!script || failed(applySchedule(*kernel->module, *script)))
        return failure();

      CompiledGpuKernel &out = compiled.gpuKernels.emplace_back();
      out.workloadKey = workload.key;
      out.groupKey = getGroupKey(groupAnchor, fusion);
      out.opName = workload.opName;
      out.ruleName = schedule.rule->getName().str();
      if (options.stage == CompileStage::Scheduled) {
        out.mlir = print(*kernel->module);
        continue;
      }
      FailureOr<GpuKernelBinary> binary =
          lowerKernelToGpuBinary(*kernel->module, target);
      if (failed(binary))
        return failure();
      if (options.stage == CompileStage::Mlir) {
        out.mlir = print(*kernel->module);
        continue;
      }
      out.binary = std::move(*binary);
    }
  if (options.stage == CompileStage::SharedLibrary &&
      failed(linkWholeModel(module, target, fusion, compiled)))
    return failure();
  return compiled;
}

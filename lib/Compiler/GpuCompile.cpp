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

#include "ke/Codegen/CpuPipeline.h"
#include "ke/Codegen/GpuPipeline.h"
#include "ke/TunedSchedules/TunedSchedules.h"
#include "ke/Workload/Workload.h"

#include "mlir/IR/Diagnostics.h"
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
  // Fills and consumers fused into another workload's kernel are compiled
  // as part of it.
  llvm::erase_if(workloads, [&](const Workload &w) {
    return getFusingAnchor(w.firstOp, fusion) != nullptr;
  });
  if (workloads.empty())
    return module.emitError("ke: the module has no workload to compile for ")
           << target.name;

  CompiledModule compiled;
  for (const Workload &workload : workloads) {
    FailureOr<KernelModule> kernel =
        buildKernelModule(workload.firstOp, fusion);
    if (failed(kernel))
      return failure();
    Operation *anchor = findKernelAnchor(*kernel->module);
    llvm::Expected<std::optional<ChosenSchedule>> chosen = chooseSchedule(
        database->get(), options.databasePath, anchor, workload.key, target);
    if (!chosen)
      return workload.firstOp->emitError("ke: ")
             << llvm::toString(chosen.takeError());
    // No GPU rule applies (getDefaultSchedule remarked): the op has no GPU
    // lowering without one.
    if (!*chosen)
      return workload.firstOp->emitError("ke: no ")
             << stringifyTargetFamily(target.family)
             << " sketch rule applies to " << workload.opName;
    emitRemark(workload.firstOp->getLoc(),
               (*chosen)->getRemark(options.databasePath));
    const Schedule &schedule = (*chosen)->schedule;
    OwningOpRef<ModuleOp> script =
        parseScript(schedule.getScript(anchor, target), module.getContext());
    if (!script || failed(applySchedule(*kernel->module, *script)))
      return failure();

    CompiledGpuKernel &out = compiled.gpuKernels.emplace_back();
    out.workloadKey = workload.key;
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
  return compiled;
}

//===- Compiler.h - Whole modules compiled with tuned schedules -*- C++ -*-===//
//
// What `ke-opt compile` does, as a library, so that every host (the driver,
// the pass plugin, a Python package) compiles the same way: every workload
// of a module gets its best record in the tuning database or its default
// schedule (ke/TunedSchedules), then the module is lowered for the target.
//   - CPU targets: the whole module is scheduled in place
//     (--ke-apply-tuned-schedules), lowered to the LLVM dialect
//     (lowerModuleToLLVM), translated to LLVM IR, optimized at -O3 for the
//     target's triple, CPU and features, and emitted: one text or object.
//   - GPU targets: each kernel group (a workload's anchor with the ops fused
//     into it, getKernelFusion) is built into a kernel module, scheduled,
//     and lowered on its own (lowerKernelToGpuBinary): one binary per group.
// Errors are MLIR diagnostics at their locations; remarks say which schedule
// each workload got and why.
//
//===----------------------------------------------------------------------===//
#ifndef KE_COMPILER_COMPILER_H
#define KE_COMPILER_COMPILER_H

#include "ke/Codegen/GpuKernel.h"
#include "ke/Graph/GraphPreparation.h"
#include "ke/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace ke {

/// How far compileModule goes.
enum class CompileStage {
  /// The schedules applied (MLIR on tensors; GPU: each kernel module).
  Scheduled,
  /// The LLVM dialect (CPU), each lowered kernel module (GPU).
  Mlir,
  /// Optimized LLVM IR (CPU only).
  Llvm,
  /// Assembly (CPU); GPU: the same binaries as Obj.
  Asm,
  /// An object file (CPU); GPU: PTX and, where ptxas runs, a cubin
  /// (CUDA), or an HSA code object (ROCm).
  Obj,
  /// CUDA: the whole public function as one shared object that runs it
  /// on the GPU (ke-c/ke_model.h): every kernel group as in Obj, with the
  /// glue between them.
  SharedLibrary,
};

/// Options of compileModule.
struct CompileOptions {
  /// The tuning database to read schedules from (it must exist); empty:
  /// default schedules only.
  std::string databasePath;
  CompileStage stage = CompileStage::Obj;
  /// CPU: run the loops of schedules with threads on OpenMP; false makes
  /// them sequential (the code then needs no OpenMP runtime).
  bool openmp = true;
  /// CPU: apply no schedule (linalg ops become plain loops: the reference
  /// that candidates are checked against).
  bool reference = false;
  /// Run the graph preparation (ke/Graph/GraphPreparation.h) first, as
  /// ke-opt's other subcommands do on their inputs.
  bool prepareGraph = true;
  GraphPreparationOptions graphPreparation;
  /// CPU: results become out-parameters the caller allocates
  /// (ModuleLoweringOptions::resultsToOutParams); the C API sets it.
  bool resultsToOutParams = false;
};

/// One kernel group of a GPU compile.
struct CompiledGpuKernel {
  std::string workloadKey, opName;
  /// The workload key and those of the ops fused with the anchor: two
  /// groups of one workload can hold different ops, and get one kernel each.
  std::string groupKey;
  /// The sketch rule of the schedule it got.
  std::string ruleName;
  /// Stages Scheduled and Mlir: the kernel module, printed.
  std::string mlir;
  /// Stages Asm and Obj: the device code and its launches.
  GpuKernelBinary binary;
};

/// What compileModule produces.
struct CompiledModule {
  /// CPU targets: the MLIR text, LLVM IR, assembly or object file.
  std::string cpuCode;
  /// GPU targets: one entry per kernel group, in program order.
  std::vector<CompiledGpuKernel> gpuKernels;
  /// Stage SharedLibrary: the model's shared object.
  std::string sharedLibrary;
};

/// Compiles `module` for `target` with its tuned schedules (see the file
/// comment); CPU targets change `module` in place. Failure after an error
/// diagnostic. Does not guard against crashes in MLIR or LLVM: callers that
/// must survive one wrap the call in runCrashSafely (ke/Support).
mlir::FailureOr<CompiledModule> compileModule(mlir::ModuleOp module,
                                              const TargetDescription &target,
                                              const CompileOptions &options);

} // namespace ke

#endif // KE_COMPILER_COMPILER_H

//===- Compiler.cpp - Whole modules compiled with their tuned schedules ---===//
//
// Map of the Compiler component (ke/Compiler/Compiler.h, docs/compile.md):
//   Compiler.cpp      compileModule: checks the options against the target
//                     and dispatches
//   CpuCompile.cpp    the module scheduled in place by the apply pass,
//                     lowered, translated, optimized and emitted
//   GpuCompile.cpp    each kernel group built, scheduled (chooseSchedule)
//                     and lowered to device code on its own
//
//===----------------------------------------------------------------------===//

#include "ke/Compiler/Compiler.h"

#include "CompilerInternal.h"

#include "ke/Graph/GraphPreparation.h"

using namespace mlir;
using namespace ke;

FailureOr<CompiledModule> ke::compileModule(ModuleOp module,
                                            const TargetDescription &target,
                                            const CompileOptions &options) {
  // The workloads the schedules were tuned for are those of the prepared
  // graph (ke-opt tune prepares its inputs the same way).
  if (options.prepareGraph &&
      failed(prepareGraph(module, options.graphPreparation)))
    return failure();
  if (target.isGpu()) {
    if (options.reference)
      return module.emitError("ke: the reference (no schedules) compiles for "
                              "cpu targets only, not '")
             << target.name << "'";
    if (options.stage == CompileStage::Llvm)
      return module.emitError("ke: LLVM IR is written for cpu targets only, "
                              "not '")
             << target.name << "'";
    return compileModuleForGpu(module, target, options);
  }
  if (options.stage == CompileStage::SharedLibrary)
    return module.emitError("ke: a cpu target compiles to an object file "
                            "(--emit=obj) to link, not a shared library");
  return compileModuleForCpu(module, target, options);
}

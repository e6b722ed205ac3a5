//===- Compiler.cpp - Whole modules compiled with their tuned schedules ---===//

#include "ke/Compiler/Compiler.h"

#include "CompilerInternal.h"

using namespace mlir;
using namespace ke;

FailureOr<CompiledModule> ke::compileModule(ModuleOp module,
                                            const TargetDescription &target,
                                            const CompileOptions &options) {
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
  return compileModuleForCpu(module, target, options);
}

//===- CpuCompile.cpp - A whole module to an object file on CPUs ----------===//
//
// The module is scheduled in place by --ke-apply-tuned-schedules (every
// workload's best record or its default schedule), lowered to the LLVM
// dialect (lowerModuleToLLVM), translated to LLVM IR, optimized at -O3 for
// the target machine and emitted.
//
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"

#include "ke/Codegen/CpuModuleLowering.h"
#include "ke/Codegen/LLVMTargets.h"
#include "ke/Transforms/Passes.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace ke;

/// The LLVM target machine of `target` (-O3, position-independent). Null
/// after an error at `module`.
static std::unique_ptr<llvm::TargetMachine>
createTargetMachine(ModuleOp module, const TargetDescription &target) {
  initializeKeLLVMTargets();
  llvm::Triple triple(target.triple);
  std::string message;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, message);
  if (!llvmTarget) {
    module.emitError("ke: no LLVM backend for '")
        << target.triple << "': " << message;
    return nullptr;
  }
  // Position-independent, so the object links into executables (PIE) and
  // shared libraries alike.
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, target.chip, target.features, llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    module.emitError("ke: cannot create a target machine for '")
        << target.triple << "' (" << target.chip << ")";
  return machine;
}

/// Puts the target's CPU, features and vector lengths on every function, so
/// the LLVM IR describes its target on its own, as clang's does.
static void addTargetAttributes(llvm::Module &llvmModule,
                                const TargetDescription &target) {
  // Fixed-length SVE (A64FX) goes on as vscale_range(N, N): the AArch64
  // backend then lowers MLIR's fixed-length vectors to SVE registers
  // (without it, to NEON), as -aarch64-sve-vector-bits-min would, but per
  // function and without touching LLVM's global options. Scalable SVE
  // (generic aarch64) gets the architectural range vscale_range(1,16) (128
  // to 2048 bits): the code's vectors are [N] x vscale wide and correct on
  // every length.
  llvm::LLVMContext &context = llvmModule.getContext();
  std::optional<unsigned> vscale = getFixedSveVscale(target);
  bool scalableSve = target.isCpu() && target.cpu.scalableVectors &&
                     StringRef(target.triple).starts_with("aarch64");
  for (llvm::Function &function : llvmModule) {
    if (function.isDeclaration())
      continue;
    function.addFnAttr("target-cpu", target.chip);
    if (!target.features.empty())
      function.addFnAttr("target-features", target.features);
    if (vscale)
      function.addFnAttr(
          llvm::Attribute::getWithVScaleRangeArgs(context, *vscale, *vscale));
    else if (scalableSve)
      function.addFnAttr(
          llvm::Attribute::getWithVScaleRangeArgs(context, 1, 16));
  }
}

/// Translates the LLVM-dialect `module`, optimizes it and emits what
/// `stage` asks for (Llvm, Asm or Obj) into `code`.
static LogicalResult emitCode(ModuleOp module, const TargetDescription &target,
                              CompileStage stage, std::string &code) {
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(module, target);
  if (!machine)
    return failure();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return module.emitError("ke: cannot translate the lowered module to LLVM "
                            "IR (see the errors above)");
  llvmModule->setTargetTriple(machine->getTargetTriple());
  llvmModule->setDataLayout(machine->createDataLayout());
  addTargetAttributes(*llvmModule, target);
  if (llvm::Error err = makeOptimizingTransformer(
          /*optLevel=*/3, /*sizeLevel=*/0, machine.get())(llvmModule.get()))
    return module.emitError("ke: LLVM optimization failed: ")
           << llvm::toString(std::move(err));
  llvm::raw_string_ostream text(code);
  if (stage == CompileStage::Llvm) {
    llvmModule->print(text, nullptr);
    return success();
  }
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   stage == CompileStage::Asm
                                       ? llvm::CodeGenFileType::AssemblyFile
                                       : llvm::CodeGenFileType::ObjectFile))
    return module.emitError("ke: the LLVM backend for '")
           << target.triple << "' cannot emit this kind of file";
  codegen.run(*llvmModule);
  code.append(buffer.begin(), buffer.end());
  return success();
}

FailureOr<CompiledModule>
ke::compileModuleForCpu(ModuleOp module, const TargetDescription &target,
                        const CompileOptions &options) {
  if (!options.reference) {
    PassManager pm(module.getContext());
    ApplyTunedSchedulesPassOptions apply;
    apply.db = options.databasePath;
    apply.target = target.name;
    pm.addPass(createApplyTunedSchedulesPass(apply));
    if (failed(pm.run(module)))
      return failure();
  }
  CompiledModule compiled;
  if (options.stage != CompileStage::Scheduled) {
    ModuleLoweringOptions lowering;
    lowering.openmp = options.openmp;
    lowering.resultsToOutParams = options.resultsToOutParams;
    lowering.scalableVectors = target.isCpu() && target.cpu.scalableVectors;
    if (failed(lowerModuleToLLVM(module, lowering)))
      return failure();
  }
  if (options.stage == CompileStage::Scheduled ||
      options.stage == CompileStage::Mlir) {
    llvm::raw_string_ostream os(compiled.cpuCode);
    module->print(os);
    os << "\n";
    return compiled;
  }
  if (failed(emitCode(module, target, options.stage, compiled.cpuCode)))
    return failure();
  return compiled;
}

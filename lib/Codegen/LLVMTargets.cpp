//===- LLVMTargets.cpp - The LLVM backends ke emits code for --------------===//

#include "ke/Codegen/LLVMTargets.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"

void ke::initializeKeLLVMTargets() {
  static const bool initialized = [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
    LLVMInitializeAArch64AsmParser();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();
    return true;
  }();
  (void)initialized;
}

llvm::SmallVector<llvm::StringRef> ke::getCompiledInLLVMTargets() {
  initializeKeLLVMTargets();
  llvm::SmallVector<llvm::StringRef> names;
  for (const llvm::Target &target : llvm::TargetRegistry::targets())
    names.push_back(target.getName());
  llvm::sort(names);
  return names;
}

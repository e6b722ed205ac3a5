//===- LLVMTargets.h - The LLVM backends ke emits code for ------*- C++ -*-===//
//
// ke links only the LLVM backends it emits code for (x86, AArch64, NVPTX,
// AMDGPU) into its static binary; code generation and the JIT initialize
// them here, below every component that emits code.
//
//===----------------------------------------------------------------------===//
#ifndef KE_CODEGEN_LLVMTARGETS_H
#define KE_CODEGEN_LLVMTARGETS_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace ke {

/// Initializes the LLVM backends ke emits code for: x86, AArch64, NVPTX and
/// AMDGPU (target info, machine code, asm printer and parser). Idempotent.
void initializeKeLLVMTargets();

/// Names of the LLVM backends compiled into this binary, sorted.
llvm::SmallVector<llvm::StringRef> getCompiledInLLVMTargets();

} // namespace ke

#endif // KE_CODEGEN_LLVMTARGETS_H

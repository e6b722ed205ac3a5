//===- CompilerInternal.h - compileModule for CPUs and GPUs -----*- C++ -*-===//
//
// Private to lib/Compiler.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_COMPILER_COMPILERINTERNAL_H
#define KE_LIB_COMPILER_COMPILERINTERNAL_H

#include "ke/Compiler/Compiler.h"

namespace ke {

/// compileModule for CPU targets (CpuCompile.cpp).
mlir::FailureOr<CompiledModule>
compileModuleForCpu(mlir::ModuleOp module, const TargetDescription &target,
                    const CompileOptions &options);

/// compileModule for CUDA and ROCm targets (GpuCompile.cpp).
mlir::FailureOr<CompiledModule>
compileModuleForGpu(mlir::ModuleOp module, const TargetDescription &target,
                    const CompileOptions &options);

/// The shared object of a GPU model whose blob (ke/Compiler/ModelFormat.h)
/// is `blob`: linked with the model runtime (ModelLibrary.cpp). Errors are
/// reported at `module`.
mlir::FailureOr<std::string> linkModelLibrary(mlir::ModuleOp module,
                                              llvm::StringRef blob);

} // namespace ke

#endif // KE_LIB_COMPILER_COMPILERINTERNAL_H

//===- GpuLaunches.h - Launches of an outlined kernel module ----*- C++ -*-===//
#ifndef KE_LIB_CODEGEN_GPULAUNCHES_H
#define KE_LIB_CODEGEN_GPULAUNCHES_H

#include "ke/Codegen/GpuKernel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <vector>

namespace ke {

/// The gpu.launch_func ops of the kernel module's host function (@kernel),
/// in order, as GpuLaunch records: static grid, block and dynamic shared
/// memory sizes, and each kernel operand as the fields of the memref
/// descriptor of one of @kernel's arguments (MLIR's expanded calling
/// convention: allocated and aligned pointer, offset, sizes, strides) or as
/// a captured constant, or of a static host allocation (memref.alloc in
/// @kernel: partial results one launch leaves for the next), which becomes
/// a scratch buffer appended to `scratch`. Fails with a diagnostic on
/// dynamic sizes or on an operand that is none of these.
mlir::FailureOr<std::vector<GpuLaunch>>
readGpuLaunches(mlir::ModuleOp kernel,
                std::vector<GpuScratchBuffer> *scratch = nullptr);

} // namespace ke

#endif // KE_LIB_CODEGEN_GPULAUNCHES_H

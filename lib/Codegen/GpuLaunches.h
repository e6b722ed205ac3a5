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
/// a scratch buffer appended to `scratch`; an operand made by
/// `llvm.inttoptr` marked `ke.tensor_map` (see kTensorMapAttr) becomes a
/// tensor map appended to `tensorMaps`. Fails with a diagnostic on dynamic
/// sizes or on an operand that is none of these.
mlir::FailureOr<std::vector<GpuLaunch>>
readGpuLaunches(mlir::ModuleOp kernel,
                std::vector<GpuScratchBuffer> *scratch = nullptr,
                std::vector<GpuTensorMap> *tensorMaps = nullptr);

/// The attribute that marks a host value as a TMA tensor map: an
/// `llvm.inttoptr` of a buffer's aligned pointer
/// (memref.extract_aligned_pointer_as_index, arith.index_cast) carrying
/// `{box = [...], swizzle = 128 : i64}`, the box outermost first. Kernels
/// take it as the generic pointer to the map (TMA copies name the map, not
/// the buffer); the runners put the encoded map there. makeTensorMap builds
/// one.
inline constexpr llvm::StringLiteral kTensorMapAttr = "ke.tensor_map";

/// Builds, at `builder`'s insertion point in the host function, the marked
/// pointer of a tensor map over `buffer` (a host argument or allocation,
/// contiguous) with box `box` (outermost first) in the 128-byte swizzle.
mlir::Value makeTensorMap(mlir::OpBuilder &builder, mlir::Location loc,
                          mlir::Value buffer, llvm::ArrayRef<int64_t> box);

} // namespace ke

#endif // KE_LIB_CODEGEN_GPULAUNCHES_H

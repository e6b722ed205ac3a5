//===- Kernel.h - A workload as a standalone, callable function -*- C++ -*-===//
//
// To compile, run and time a workload on its own, ke clones its anchor into
// a module with a single function, @kernel, whose arguments are memrefs: one
// per shaped operand, inputs first, then inits. On tensors, the function
// wraps its arguments with bufferization.to_tensor and writes each result
// into its init buffer with bufferization.materialize_in_destination, so after
// bufferization the kernel works in place on the caller's buffers. The
// function has llvm.emit_c_interface, so the runner calls
// _mlir_ciface_kernel with one memref descriptor per argument.
//
//===----------------------------------------------------------------------===//
#ifndef KE_WORKLOAD_KERNEL_H
#define KE_WORKLOAD_KERNEL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace ke {

/// The name of the kernel function in a kernel module.
inline constexpr llvm::StringLiteral kKernelFunctionName = "kernel";

/// How the kernel uses one of its buffer arguments.
enum class BufferRole {
  Input,        ///< read only
  Accumulator,  ///< an init whose initial value is read, then overwritten
  Output        ///< an init that is only written
};

/// One memref argument of @kernel.
struct KernelArgument {
  BufferRole role = BufferRole::Input;
  llvm::SmallVector<int64_t> shape;
  mlir::Type elementType;

  bool isWritten() const { return role != BufferRole::Input; }
  /// Elements in the buffer (shapes are static).
  int64_t numElements() const;
};

/// A workload's anchor as a standalone module.
struct KernelModule {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  llvm::SmallVector<KernelArgument> arguments;
};

/// Builds the kernel module of `anchor` in `anchor`'s context. Fails, with a
/// diagnostic at the anchor, for dynamic shapes and for scalar operands that
/// are not constants (the kernel ABI passes buffers only).
mlir::FailureOr<KernelModule> buildKernelModule(mlir::Operation *anchor);

/// The operation in `module` that corresponds to the anchor: the first
/// workload anchor inside @kernel.
mlir::Operation *findKernelAnchor(mlir::ModuleOp module);

} // namespace ke

#endif // KE_WORKLOAD_KERNEL_H

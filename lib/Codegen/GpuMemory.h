//===- GpuMemory.h - Which memory a GPU kernel's accesses touch --*- C++ -*-===//
//
// Shared by the GPU passes that reason about which buffer or memory space
// an access touches (ke-gpu-hoist-accumulator-tiles, ke-gpu-hoist-barriers,
// ke-gpu-stage-loop-occupancy). Private to lib/Codegen.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_CODEGEN_GPUMEMORY_H
#define KE_LIB_CODEGEN_GPUMEMORY_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace ke {

/// The buffer a memref value views: a function (kernel) argument or an
/// allocation, through subviews, casts and alignment assumptions.
mlir::Value getMemrefRoot(mlir::Value value);

/// True when `root` is a buffer distinct from every other argument and
/// allocation: an argument of the kernel function (ke's runners allocate
/// each kernel buffer on its own) or an allocation.
bool isDistinctBuffer(mlir::Value root);

/// True for a memref in GPU workgroup (shared) memory.
bool isWorkgroupMemref(mlir::Type type);

/// True for a memref in GPU private (per-thread) memory.
bool isPrivateMemref(mlir::Type type);

/// Whether `op` or an op it holds may write memory that `matches` (given
/// the written value), or writes without naming a value, or has effects
/// that cannot be seen (no MemoryEffectOpInterface: calls, unknown ops).
/// Barriers order, they do not access: they are skipped.
bool mayWriteMemory(mlir::Operation *op,
                    llvm::function_ref<bool(mlir::Value)> matches);

} // namespace ke

#endif // KE_LIB_CODEGEN_GPUMEMORY_H

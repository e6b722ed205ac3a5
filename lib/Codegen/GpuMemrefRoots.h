//===- GpuMemrefRoots.h - Which buffer a memref value views ------*- C++ -*-===//
//
// Shared by the GPU passes that reason about which kernel buffer an access
// touches (ke-gpu-hoist-accumulator-tiles, ke-gpu-prefetch-shared-tiles).
// Private to lib/Codegen.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_CODEGEN_GPUMEMREFROOTS_H
#define KE_LIB_CODEGEN_GPUMEMREFROOTS_H

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

} // namespace ke

#endif // KE_LIB_CODEGEN_GPUMEMREFROOTS_H

//===- GpuMmaEpilogue.h - Fused consumers of mma.sync tiles -----*- C++ -*-===//
//
// The two halves of the gpu.mma epilogue, steps of ke-gpu-vector-to-mma
// (GpuVectorToMma.cpp) on either side of upstream's mma.sync conversion.
// Private to lib/Codegen.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_CODEGEN_GPUMMAEPILOGUE_H
#define KE_LIB_CODEGEN_GPUMMAEPILOGUE_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/LogicalResult.h"

namespace ke {

/// Before the conversion: rewrites each warp-level 16x8 consumer chain of
/// `launch` (a transfer_write whose value is computed, elementwise, from
/// reads of the private block tile the accumulators are written to) into
/// per-lane code in the accumulator's own fragment layout: each lane
/// computes and writes the elements it holds, reading the block tile at
/// exactly the positions the conversion will store its accumulators.
/// Fails, with a diagnostic, on an op of the chain it cannot distribute.
mlir::LogicalResult distributeMmaEpilogues(mlir::gpu::LaunchOp launch);

/// After the conversion: forwards each per-lane load of a private block
/// tile from the accumulator store of the same position, then erases the
/// tile. Fails, with a diagnostic, when a load has no such store.
mlir::LogicalResult forwardMmaEpilogueTiles(mlir::gpu::LaunchOp launch);

} // namespace ke

#endif // KE_LIB_CODEGEN_GPUMMAEPILOGUE_H

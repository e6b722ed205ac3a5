//===- LinalgBody.h - A linalg op's body at given loop indices -*- C++ -*-===//
//
// Private to lib/Codegen. The kernels built by passes (the GEMM kernels'
// epilogues, ke-gpu-column-reduce) evaluate a linalg op's body for one
// iteration of their own loops: its operands' elements loaded through the
// indexing maps, some operands bound to values the kernel already holds
// (an accumulator, a final sum).
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_CODEGEN_LINALGBODY_H
#define KE_LIB_CODEGEN_LINALGBODY_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace ke {

/// The value `op`'s body yields at its loop indices `loops`, built at `b`.
/// Each block argument that the body uses takes `bound(operand)` where
/// that is not null, else a scalar operand itself, else the operand's
/// element through its indexing map (memref.load of affine.apply); each
/// linalg.index d is `loops[d]`.
mlir::Value
applyLinalgBody(mlir::ImplicitLocOpBuilder &b, mlir::linalg::LinalgOp op,
                mlir::ValueRange loops,
                llvm::function_ref<mlir::Value(mlir::OpOperand &)> bound);

} // namespace ke

#endif // KE_LIB_CODEGEN_LINALGBODY_H

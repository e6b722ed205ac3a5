//===- ArgReduction.h - argmax / argmin over rows ---------------*- C++ -*-===//
//
// An arg reduction is a linalg op with one float input and two inits (the
// best value and its index) reducing the innermost loop, whose body keeps
// the first maximum (or minimum) of each row and its position, as
// torch-mlir writes torch.argmax / argmin and as the suite's argmax is
// written:
//
//   %c = arith.cmpf ogt, %in, %best          (olt for a minimum)
//   %v = arith.select %c, %in, %best          (or arith.maximumf / maxnumf,
//                                              minimumf / minnumf)
//   %i = arith.select %c, index_cast(linalg.index last), %index
//   linalg.yield %v, %i
//
// The GPU row kernel (gpu.argrow, ke-gpu-row-argmax) splits such a row over
// threads: each keeps its first best and index, and two partial results
// combine by value, ties to the smaller index, which is the sequential
// answer for rows without NaN (rows with NaN are scanned in order).
//
//===----------------------------------------------------------------------===//
#ifndef KE_WORKLOAD_ARGREDUCTION_H
#define KE_WORKLOAD_ARGREDUCTION_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace ke {

/// What an arg reduction keeps.
struct ArgReduction {
  /// ogt (the first maximum) or olt (the first minimum): whether an element
  /// `x` replaces the best so far `b` is `cmpf predicate, x, b`.
  mlir::arith::CmpFPredicate predicate;
  /// The input's (and the best value's) float type and the index's integer
  /// (or index) type.
  mlir::Type valueType, indexType;
};

/// `op` as an arg reduction over its innermost loop (tensors or buffers,
/// static or not), or nothing.
std::optional<ArgReduction> matchArgReduction(mlir::linalg::LinalgOp op);

} // namespace ke

#endif // KE_WORKLOAD_ARGREDUCTION_H

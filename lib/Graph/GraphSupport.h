//===- GraphSupport.h - What the graph preparation passes share -*- C++ -*-===//
//
// The passes of lib/Graph rewrite ops the user wrote as well as imported
// ones, and must leave alone what they have nothing to do for: their
// pattern driver neither folds nor moves constants (the greedy driver's
// defaults would hoist and merge every arith.constant of a hand-written
// file), nor erases the ops a hand-written file leaves unused. Folding a
// transpose or broadcast into a consumer composes the maps the same way for
// contractions and elementwise generics.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_GRAPH_GRAPHSUPPORT_H
#define KE_LIB_GRAPH_GRAPHSUPPORT_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "llvm/ADT/SmallBitVector.h"

namespace ke {

/// Applies `patterns` greedily to the ops nested in `root` and the ops they
/// create, without folding or constant CSE, and without erasing the ops
/// that were dead before. Not converging is no error (the IR is valid
/// either way); `debugType` names the pass in debug output.
void applyGraphPatterns(mlir::Operation *root,
                        const mlir::FrozenRewritePatternSet &patterns,
                        llvm::StringRef debugType);

/// The linalg.transpose (or, with `allowBroadcast`, linalg.broadcast) on
/// tensors that produces `value`; null for anything else.
mlir::linalg::LinalgOp getDataMovementProducer(mlir::Value value,
                                               bool allowBroadcast);

/// The map through which a consumer reads the input of `producer` (a
/// transpose or broadcast, whose result map is a permutation) when it read
/// the producer's result through `consumerMap`: the producer's input map,
/// after the inverse of its result map, after `consumerMap`.
mlir::AffineMap composeThroughProducer(mlir::linalg::LinalgOp producer,
                                       mlir::AffineMap consumerMap);

/// An elementwise generic over `input` (a ranked tensor) into a fresh
/// tensor of `element`, whose body maps each element with `convert` (a
/// cast: extf, truncf, trunci).
mlir::Value createElementwiseConversion(
    mlir::OpBuilder &builder, mlir::Location loc, mlir::Value input,
    mlir::Type element,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::Value)>
        convert);

/// An empty tensor of `value`'s type (a ranked tensor) with its dimensions
/// permuted: dimension i of the result is dimension perm[i] of `value`.
mlir::Value createPermutedEmpty(mlir::OpBuilder &builder, mlir::Location loc,
                                mlir::Value value,
                                llvm::ArrayRef<int64_t> perm);

/// `value` transposed by `perm` (a linalg.transpose into a fresh empty).
mlir::Value createTranspose(mlir::OpBuilder &builder, mlir::Location loc,
                            mlir::Value value, llvm::ArrayRef<int64_t> perm);

/// The elementwise generic over `destType` that yields
/// `source[(i - offset) / stride]` where position `i` is inserted in every
/// dimension (`0 <= i - offset < size * stride`, a multiple of the stride)
/// and `background` (or, when null, the value of `init`) elsewhere: a
/// strided insert, a padding, or (negative offsets) a shifted crop.
/// `dropped` marks the destination dimensions the source lacks (a
/// rank-reducing insert). Dimensions inserted whole are read unchecked.
mlir::Value createInsertGather(mlir::OpBuilder &builder, mlir::Location loc,
                               mlir::RankedTensorType destType,
                               mlir::Value init, mlir::Value background,
                               mlir::Value source,
                               llvm::ArrayRef<int64_t> offsets,
                               llvm::ArrayRef<int64_t> sizes,
                               llvm::ArrayRef<int64_t> strides,
                               const llvm::SmallBitVector &dropped);

} // namespace ke

#endif // KE_LIB_GRAPH_GRAPHSUPPORT_H

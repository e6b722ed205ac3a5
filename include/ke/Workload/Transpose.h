//===- Transpose.h - A transpose as its fewest moved dimensions -*- C++ -*-===//
//
// A linalg.transpose (PyTorch's permute, the layout changes around a
// channels-first convolution) is a copy whose reads and writes run along
// different dimensions. Output dimensions that stay next to each other in
// the input (NCHW -> NHWC keeps H and W together) move as one, and
// dimensions of extent 1 move nowhere, so the transpose is taken as one of
// merged dimensions: NCHW -> NHWC becomes N x C x HW -> N x HW x C, whose
// tiles are whole rows of HW and C. The GPU transpose kernel (gpu.transpose,
// ke-gpu-transpose) tiles the merged input's and output's innermost
// dimensions through shared memory.
//
//===----------------------------------------------------------------------===//
#ifndef KE_WORKLOAD_TRANSPOSE_H
#define KE_WORKLOAD_TRANSPOSE_H

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace ke {

/// A transpose of merged dimensions: output dimension i of `shape` is input
/// dimension `permutation[i]` of the merged input.
struct MergedTranspose {
  /// Which output (input) dimensions make each merged output (input)
  /// dimension, each group a contiguous range; dimensions of extent 1 join
  /// the group of the one before them (the first group when they lead).
  llvm::SmallVector<mlir::ReassociationIndices> outputGroups, inputGroups;
  /// The merged output's extents.
  llvm::SmallVector<int64_t> shape;
  /// Merged output dimension i is merged input dimension permutation[i].
  llvm::SmallVector<int64_t> permutation;

  unsigned rank() const { return shape.size(); }
  /// The merged output dimension that the input holds innermost.
  unsigned inputInnermost() const;
  /// True when the input's innermost merged dimension is not the output's:
  /// the reads and the writes then run along different dimensions.
  bool movesInnermost() const {
    return rank() > 1 && permutation.back() != int64_t(rank()) - 1;
  }
};

/// `outputShape` (static) and `permutation` as linalg.transpose takes them:
/// output dimension i is input dimension permutation[i].
MergedTranspose mergeTranspose(llvm::ArrayRef<int64_t> outputShape,
                               llvm::ArrayRef<int64_t> permutation);

} // namespace ke

#endif // KE_WORKLOAD_TRANSPOSE_H

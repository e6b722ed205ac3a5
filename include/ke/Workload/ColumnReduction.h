//===- ColumnReduction.h - Reductions along a non-innermost loop -*- C++ -*-===//
//
// A column reduction sums (or takes the max, ...) along a loop that is not
// the innermost one: BatchNorm's statistics over the batch of an
// [N, C] activation, torch.sum(x, dim=1) of a [B, R, C] tensor. Its
// innermost loop is parallel, so adjacent outputs read adjacent inputs: a
// GPU kernel gives adjacent threads adjacent columns (whole 128-byte lines
// per warp) and splits the reduction loop over more threads of the block,
// combining their partial results in shared memory (gpu.colreduce,
// ke-gpu-column-reduce). Mapped like an elementwise op instead, each
// thread ran the whole reduction loop alone: for 4096 columns, 4 blocks on
// an H200.
//
//===----------------------------------------------------------------------===//
#ifndef KE_WORKLOAD_COLUMNREDUCTION_H
#define KE_WORKLOAD_COLUMNREDUCTION_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>

namespace ke {

/// A linalg op's loops as (batch, rows, columns): the parallel loops
/// before its one reduction loop, the reduction loop, the parallel loops
/// after it.
struct ColumnReduction {
  /// The reduction loop's position among the op's loops (never the last).
  unsigned reductionLoop = 0;
  llvm::SmallVector<int64_t> ranges;
  /// Products of the ranges before and after the reduction loop, and the
  /// reduction loop's range.
  int64_t batch = 1, rows = 1, columns = 1;
  /// The body's combining op (getReductionCombiner).
  mlir::Operation *combiner = nullptr;
};

/// `op` as a column reduction: static, non-empty loop ranges; one init;
/// exactly one reduction loop, not the innermost; every operand read
/// through a projected permutation (constant 0 results allowed: a kept
/// dimension of extent 1); a body of the form `combine(acc, f(inputs))`
/// (getReductionCombiner). Nothing otherwise.
std::optional<ColumnReduction>
analyzeColumnReduction(mlir::linalg::LinalgOp op);

} // namespace ke

#endif // KE_WORKLOAD_COLUMNREDUCTION_H

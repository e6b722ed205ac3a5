//===- GpuRowKernel.h - What the row kernel builders share ------*- C++ -*-===//
//
// Private to lib/Codegen. The row sketches that build their kernels in a
// pass (gpu.softmax's row kernel, gpu.argrow) mark the op with
// {row_threads, rows, vec, warp}; the passes (GpuRowSoftmax.cpp,
// GpuRowArgmax.cpp) build on RowKernelBuilder: R rows of C elements
// (the leading dimensions as one), `rows` rows of `row_threads` threads per
// block, each thread's vectors of `vec` elements at columns (k *
// row_threads + lane) * vec, those past the row skipped (vec divides C, so
// a vector is wholly inside or past it), and per-thread partial results
// combined over the row's threads: xor shuffles within a warp, shared
// memory across the row's warps.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_CODEGEN_GPUROWKERNEL_H
#define KE_LIB_CODEGEN_GPUROWKERNEL_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace ke {

/// The ops of type OpT under `root` that carry the attribute `mark`, in
/// walk order: collected before any kernel is built, since building one
/// erases its op.
template <typename OpT>
llvm::SmallVector<OpT> collectMarked(mlir::Operation *root,
                                     llvm::StringRef mark) {
  llvm::SmallVector<OpT> marked;
  root->walk([&](OpT op) {
    if (op->hasAttr(mark))
      marked.push_back(op);
  });
  return marked;
}

/// Rows and the knobs that split them.
struct RowGeometry {
  int64_t rows = 0, cols = 0;
  int64_t rowThreads = 1, rowsPerBlock = 1, vec = 1, warp = 32;

  int64_t blockThreads() const { return rowThreads * rowsPerBlock; }
  int64_t blocks() const;
  /// Vectors per thread and row.
  int64_t steps() const;
};

/// Reads {row_threads, rows, vec, warp} from the dictionary `mark` on `op`
/// for R x C rows and checks them: powers of two, `vec` dividing C, blocks
/// of whole warps. A located error otherwise.
mlir::FailureOr<RowGeometry> readRowGeometry(mlir::Operation *op,
                                             llvm::StringRef mark,
                                             int64_t rows, int64_t cols);

/// The linalg.fill that last wrote `buffer` before `op` in its block, with
/// nothing between them using it (its value is then the op's init); null
/// if there is none.
mlir::linalg::FillOp findFillBefore(mlir::Operation *op, mlir::Value buffer);

class RowKernelBuilder {
protected:
  /// Builds before `op`.
  RowKernelBuilder(mlir::Operation *op, const RowGeometry &geometry);

  mlir::Value index(int64_t v);
  /// The launch (a block per `rows` rows), its terminator, and `lane`,
  /// `rowInBlock`, `row` and `rowInside`; the builder is left at the start
  /// of its body.
  mlir::gpu::LaunchOp beginLaunch();
  /// A contiguous memref of R x C elements as a 2-D one.
  mlir::Value asRows(mlir::Value memref);
  /// A contiguous memref of R elements (one per row) as a 1-D one.
  mlir::Value asRowResults(mlir::Value memref);
  /// This thread's column of vector `step`.
  mlir::Value columnOf(mlir::Value step);
  /// Whether `column` and this thread's row lie inside (null: always).
  mlir::Value inside(mlir::Value column);
  /// A loop over this thread's vectors of its row: `step` gets each
  /// vector's column and the values carried from `init` (none: nothing
  /// carried) and returns the next ones; vectors past the row (or of a row
  /// past the last) are skipped, the values carried unchanged. Returns the
  /// values after the last vector.
  mlir::SmallVector<mlir::Value> forEachVector(
      mlir::ValueRange init,
      llvm::function_ref<mlir::SmallVector<mlir::Value>(mlir::Value,
                                                        mlir::ValueRange)>
          step);
  /// Whether this thread is its row's first and the row lies inside.
  mlir::Value firstOfRow();
  /// Every thread's partial result `state` (32-bit scalars) combined over
  /// its row's threads by `combine` (commutative and associative), the
  /// same for every thread of the row.
  mlir::SmallVector<mlir::Value> combineRow(
      mlir::ValueRange state,
      llvm::function_ref<mlir::SmallVector<mlir::Value>(mlir::ValueRange,
                                                        mlir::ValueRange)>
          combine);

  RowGeometry g;
  mlir::ImplicitLocOpBuilder b;
  mlir::Value lane, rowInBlock, row, rowInside;
};

} // namespace ke

#endif // KE_LIB_CODEGEN_GPUROWKERNEL_H

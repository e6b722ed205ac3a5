//===- GpuRowKernel.h - Rules whose row kernels a pass builds ---*- C++ -*-===//
//
// Private to lib/Sketch. gpu.softmax's row kernel and gpu.argrow mark
// their op with {row_threads, rows, vec, warp} for a kernel-building pass
// (lib/Codegen/GpuRowKernel.h says what the knobs mean). What they share:
// the knobs, their limits, the mark script and the loop-nest description.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_SKETCH_GPUROWKERNEL_H
#define KE_LIB_SKETCH_GPUROWKERNEL_H

#include "ke/Sketch/SketchRule.h"

#include <string>

namespace ke {

/// R rows of C elements of `elementBits` bits.
struct RowKernelShape {
  int64_t rows = 0, cols = 0;
  unsigned elementBits = 32;
};

/// The knobs: row_threads (powers of two up to 1024, no more than a row
/// needs), rows per block, vec (powers of two dividing C in at most 128
/// bits). Defaults: the widest vector, the fewest threads per row leaving
/// each at most 8 vectors, 256 threads per block.
KnobSpace getRowKernelKnobs(const RowKernelShape &s,
                            const TargetDescription &target);

/// Blocks of whole warps within the target's limits, vec dividing the row,
/// the grid within 2^31 - 1 blocks.
mlir::LogicalResult checkRowKernelLimits(const RowKernelShape &s,
                                         const TargetDescription &target,
                                         const KnobAssignment &knobs,
                                         std::string &reason);

/// The script: bufferize the kernel, then annotate `opName`'s op `mark =
/// {row_threads, rows, vec, warp}` for `builder`. `markBefore`: the anchor
/// is annotated before bufferization (an op whose bufferization keeps its
/// attributes); otherwise after it, as the kernel's only `opName` op.
std::string emitRowKernelScript(llvm::StringRef rule, llvm::StringRef opName,
                                llvm::StringRef mark, llvm::StringRef builder,
                                bool markBefore,
                                const TargetDescription &target,
                                const KnobAssignment &knobs);

/// Rows over blocks, a row's vectors over its threads.
LoopNestDescription describeRowKernel(llvm::ArrayRef<int64_t> ranges,
                                      const KnobAssignment &knobs);

} // namespace ke

#endif // KE_LIB_SKETCH_GPUROWKERNEL_H

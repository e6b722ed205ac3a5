//===- GpuSupport.h - What the GPU sketch rules share -----------*- C++ -*-===//
//
// The loop analysis, knob helpers, block limits and script pieces (thread
// and block mappings, row-per-block reductions, the vectorize-bufferize-
// launch epilogue) that several GPU rules use; GpuSupport.cpp defines them.
// The rules themselves are in GpuRules.h.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_SKETCH_GPUSUPPORT_H
#define KE_LIB_SKETCH_GPUSUPPORT_H

#include "RuleSupport.h"
#include "ScriptWriter.h"

#include "ke/Sketch/SketchRule.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <array>
#include <optional>

namespace ke {

/// The memory space of shared-memory buffers in scripts.
inline constexpr llvm::StringLiteral kWorkgroup =
    "#gpu.address_space<workgroup>";
/// The memory space of per-thread buffers in scripts.
inline constexpr llvm::StringLiteral kPrivate = "#gpu.address_space<private>";

/// The loops of an anchor as the GPU rules see them.
struct GpuLoops {
  llvm::SmallVector<int64_t> ranges;
  llvm::SmallVector<unsigned> parallel, reduction;
  /// The (up to three) innermost parallel loops with more than one
  /// iteration, outermost first: they map to blocks and threads z, y, x
  /// (the last one to x, whose threads are adjacent in a warp).
  llvm::SmallVector<unsigned> mapped;
  /// The innermost reduction loop with more than one iteration.
  std::optional<unsigned> innerReduction;
  /// Bits of the first result's element type (at least 8).
  unsigned elementBits = 32;
};

GpuLoops analyzeGpuLoops(mlir::linalg::LinalgOp op);

/// Elements of one 128-bit access: the vector width for loads and stores.
int64_t vectorElements(unsigned elementBits);

/// Threads along each mapped loop (x last) for block tiles `block` and
/// thread tiles `thread` (both indexed by anchor loop).
llvm::SmallVector<int64_t> threadsPerLoop(const GpuLoops &loops,
                                          llvm::ArrayRef<int64_t> block,
                                          llvm::ArrayRef<int64_t> thread);

/// Block dimensions [x, y, z] of the mapped loops' thread counts.
std::array<int64_t, 3> blockDims(llvm::ArrayRef<int64_t> threads);

/// Checks the block against the target: threads per block, per dimension
/// (z at most 64) and, with `registersPerThread`, the register file.
mlir::LogicalResult checkBlockLimits(const TargetDescription &target,
                                     std::array<int64_t, 3> dims,
                                     int64_t registersPerThread,
                                     std::string &reason);

/// The most static shared memory (workgroup attributions) a block may use:
/// the target's limit, at most 48 KiB on CUDA (more needs the dynamic
/// opt-in, which static attributions cannot use).
uint64_t staticSharedMemoryLimit(const TargetDescription &target);

/// `#gpu.block<x>` or `#gpu.thread<y>` ... for mapped position `position`
/// of `count` (the last position is x).
std::string mappingAttr(llvm::StringRef kind, unsigned position,
                        unsigned count);

/// The mapping list of a forall that tiles the anchor loops `tiled` (in
/// forall dimension order) among `loops.mapped`.
std::string mappingList(llvm::StringRef kind, const GpuLoops &loops,
                        llvm::ArrayRef<unsigned> tiled);

/// tile_using_forall of `target` by `sizes` with `mapping`; returns the
/// tiled op and sets `forall`.
std::string tileUsingForallMapped(ScriptWriter &w, const std::string &target,
                                  llvm::ArrayRef<int64_t> sizes,
                                  const std::string &mapping,
                                  std::string &forall);

/// Vectorizes the function, bufferizes it and maps its block forall(s) to a
/// gpu.launch with `dims` threads (no launch when `mapToBlocks` is false:
/// the pipeline then runs the function on one thread). With
/// `eliminateBarriers`, the barriers that order no conflicting accesses
/// are removed after the mapping (transform.apply_patterns.gpu.
/// eliminate_barriers). `grid`, when given, is the launch's grid: a block
/// forall mapped to linear ids needs it (without it the mapping sizes the
/// grid from the forall's first three dimensions and drops the others).
void emitGpuEpilogue(ScriptWriter &w, std::array<int64_t, 3> dims,
                     bool mapToBlocks, bool eliminateBarriers = false,
                     std::optional<std::array<int64_t, 3>> grid = std::nullopt);

/// The loop nest of a row-per-block schedule over `ranges` (the last the
/// row): a row per block, N/threads elements per thread, then `inner` at a
/// time when inner > 0 (the vector width; else the whole chunk).
LoopNestDescription describeRowPerBlock(llvm::ArrayRef<int64_t> ranges,
                                        int64_t threads, int64_t inner);

/// Threads per block of a row-per-block schedule: multiples of the warp
/// dividing the row, leaving each thread at most `maxChunk` elements when
/// maxChunk > 0.
llvm::SmallVector<int64_t> rowThreadChoices(int64_t cols,
                                            const TargetDescription &target,
                                            int64_t maxChunk = 0);

/// Adjacent elements per thread and step of a row-per-block schedule
/// (powers of two up to `most`); the default is `vector` (a 128-bit access)
/// or the largest choice below it that divides the default `threads`
/// knob's share of a row of `cols`.
Knob makeRowVectorKnob(llvm::StringRef name, const Knob &threads, int64_t cols,
                       int64_t vector, int64_t most);

/// Tile sizes of rank `rank`: zero but for `size` on the last dimension.
llvm::SmallVector<int64_t> lastDimTile(unsigned rank, int64_t size);

/// Splits a one-row tile `op` (handle, `rank` dimensions) over `threads`
/// threads interleaved: an scf.for over steps of threads * vec elements
/// (`loop`), in it a forall on #gpu.thread<x> (`forall`) giving thread t
/// elements [t * vec, (t + 1) * vec) of the step. A warp's accesses are
/// then adjacent: on an H200, a block-per-row softmax that gives each
/// thread a contiguous chunk of the row instead ran at 73% of the copy
/// bandwidth, interleaved at 100% (benchmarks/gpu/softmax_layout.cu,
/// 2026-11-21). Returns the per-thread op.
std::string tileRowInterleaved(ScriptWriter &w, const std::string &op,
                               unsigned rank, int64_t threads, int64_t vec,
                               std::string &loop, std::string &forall);

/// Splits the row reduction `op` (handle; `rank` loops, the last the row,
/// one row per block already) over the block's `threads` threads with
/// tile_reduction_using_forall: each thread reduces its chunk (`kvec`
/// elements at a time when kvec > 0) into a partial result in shared
/// memory, one thread combines them (the GPU lowering turns that combine
/// into a block-wide gpu.all_reduce, lib/Codegen/GpuReductions.h). `init`,
/// the fill of the row's result, goes to shared memory too, so that every
/// thread reads the result after. `producer`, when not empty, is fused into
/// the threads' loop (recomputed for each element).
void emitRowReductionOverThreads(ScriptWriter &w, const std::string &op,
                                 const std::string &init,
                                 const std::string &producer, unsigned rank,
                                 int64_t threads, int64_t kvec);

} // namespace ke

#endif // KE_LIB_SKETCH_GPUSUPPORT_H

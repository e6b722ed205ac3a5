//===- GpuContraction.h - Matmuls as the tensor-core sketches see them -*- C++ -*-===//
//
// What gpu.mma (GpuMmaRule.cpp) and gpu.wgmma (GpuWgmmaRule.cpp) share: the
// anchor read as a matmul or batch matmul with its operand layouts, the
// epilogue they take, and knob helpers.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_SKETCH_GPUCONTRACTION_H
#define KE_LIB_SKETCH_GPUCONTRACTION_H

#include "ke/Sketch/KnobSpace.h"
#include "ke/Sketch/SketchRule.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace ke {

using mlir::AffineMap;
using mlir::ArrayRef;
using mlir::SmallVector;
using mlir::Type;

/// What the tensor-core sketches (gpu.mma, gpu.wgmma) need to know of its anchor: a linalg.matmul or
/// linalg.batch_matmul, its extents and element types, and whether A is
/// stored K x M and B N x K.
struct MmaContraction {
  /// 1 for batch_matmul (its batch loop leads), 0 for matmul.
  unsigned batchLoops = 0;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transposedA = false, transposedB = false;
  Type a, b, c;

  /// The instruction's K: 16 for 16-bit operands, 8 for TF32.
  int64_t instrK() const { return 256 / a.getIntOrFloatBitWidth(); }

  /// Tile sizes over the anchor's loops: the batch loop's `batchTile`
  /// first when there is one.
  SmallVector<int64_t> sizes(ArrayRef<int64_t> inner, int64_t batchTile) const {
    SmallVector<int64_t> all(batchLoops, batchTile);
    llvm::append_range(all, inner);
    return all;
  }
  /// The rows and columns of A's shared tile: M x K, or K x M.
  std::pair<int64_t, int64_t> aTile(int64_t blockM, int64_t kBlock) const {
    return transposedA ? std::make_pair(kBlock, blockM)
                       : std::make_pair(blockM, kBlock);
  }
  /// The rows and columns of B's shared tile: K x N, or N x K.
  std::pair<int64_t, int64_t> bTile(int64_t blockN, int64_t kBlock) const {
    return transposedB ? std::make_pair(blockN, kBlock)
                       : std::make_pair(kBlock, blockN);
  }
};

/// True when the anchor's kernel holds nothing but it, fills and at most
/// one elementwise consumer that reads the anchor's result element for
/// element (all loops parallel, the result read and written through the
/// identity): the epilogue ke-gpu-vector-to-mma applies from registers.
/// With `allowPermutedRead`, the consumer may read the result through a
/// permutation (its output still through the identity), for a kernel that
/// stores through it (gpu.ffma).
bool hasMmaEpilogueOnly(mlir::Operation *anchor,
                        bool allowPermutedRead = false);

/// Reads the operand layouts off `maps` over `batch` leading batch loops
/// (then m, n, k): A (m, k), or (k, m) with `allowTransposedA`, B (k, n)
/// or (n, k), C (m, n). False for any other maps.
bool readOperandLayouts(ArrayRef<AffineMap> maps, unsigned batch,
                        mlir::MLIRContext *context, MmaContraction &c,
                        bool allowTransposedA = false);

/// The anchor as the tensor-core sketches see it, or nothing when it is
/// neither a static matmul nor a batch matmul with the layouts above.
std::optional<MmaContraction>
analyzeContraction(mlir::Operation *anchor, bool allowTransposedA = false);

/// The anchor as a GEMM for the sketches that build their kernels in a pass
/// (gpu.wgmma, gpu.mfma): a matmul or batch matmul (analyzeContraction, A
/// stored M x K or K x M), or a static channels-last 2-D convolution (1-D
/// and 3-D too with `anySpatialRank`: gpu.ffma) as an implicit GEMM (M the
/// output pixels, N the filters, K the filter taps' channels; the filter is
/// B stored K x N).
struct TensorCoreGemm {
  MmaContraction c;
  /// The convolution's loop ranges (n, [od,] [oh,] ow, f, [kd,] [kh,] kw,
  /// c), empty for a matmul.
  SmallVector<int64_t> convLoops;
};
std::optional<TensorCoreGemm> analyzeTensorCoreGemm(mlir::Operation *anchor,
                                                    bool anySpatialRank = false);

/// The script of a sketch whose kernel a lowering pass builds (gpu.wgmma,
/// gpu.mfma, gpu.ffma): the anchor annotated `mark` = a dictionary of the
/// i64 `markKnobs` in their order, its fused consumer, if any,
/// `mark`.epilogue, and the function bufferized. `builder` names the pass
/// in a comment.
std::string
emitMarkScript(mlir::Operation *anchor, llvm::StringRef rule,
               const KnobAssignment &knobs, llvm::StringRef mark,
               ArrayRef<std::pair<llvm::StringRef, int64_t>> markKnobs,
               llvm::StringRef builder);

/// Block tile choices along an extent: powers of two from `first` up to
/// 256, none past the first that covers the extent (the last tile may be
/// partial).
SmallVector<int64_t> coveringTileChoices(int64_t extent, int64_t first);

/// The tiles of a tensor-core matmul's nest, in the matmul's (m, n, k).
struct MmaNestTiles {
  /// The block's tile (on threads), the K stage, a warp's (or warpgroup's)
  /// tile and one instruction's.
  int64_t blockM, blockN, kStage, warpM, warpN, instrM, instrN, instrK;
  int64_t threads;
  /// Elements of the innermost vectors, along N.
  int64_t vectorWidth;
};

/// The loop nest of a tensor-core matmul (gpu.mma, gpu.wgmma): block tiles
/// on threads, K stages, warp tiles, instructions; vectors along N.
LoopNestDescription describeMmaNest(const MmaContraction &c,
                                    const MmaNestTiles &t);

/// The loop nest of a convolution as an implicit GEMM over its own loops
/// (n, [od,] oh, ow, f, [kd,] kh, kw, c; `convLoops` their ranges; od
/// and kd tiled by 1): a block's blockM
/// output pixels described as whole rows of ow where they span them, the K
/// stages as one filter tap's kStage channels, warp and instruction tiles
/// likewise; vectors along f.
LoopNestDescription describeConvGemmNest(ArrayRef<int64_t> convLoops,
                                         const MmaNestTiles &t);

/// Divisors of `extent` among `candidates` that are multiples of `unit`.
SmallVector<int64_t> dividingChoices(int64_t extent,
                                     ArrayRef<int64_t> candidates,
                                     int64_t unit);

/// A knob over `choices` defaulting to the largest at most `preferred`.
Knob makeKnob(llvm::StringRef name, SmallVector<int64_t> choices,
              int64_t preferred);

} // namespace ke

#endif // KE_LIB_SKETCH_GPUCONTRACTION_H

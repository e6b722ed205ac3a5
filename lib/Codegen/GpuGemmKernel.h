//===- GpuGemmKernel.h - What the GEMM kernel builders share -*- C++ -*-===//
//
// Private to lib/Codegen. The tensor-core sketches that build their kernels
// in a pass (gpu.wgmma on Hopper, gpu.mfma on CDNA) only mark the op with
// their knobs; the passes (GpuWgmmaMatmuls.cpp, GpuMfmaMatmuls.cpp) read the
// marked op as a GEMM (analyzeMarkedGemm: a matmul, batch matmul or
// channels-last convolution with its fill and fused elementwise consumer)
// and build the kernel on GemmKernelBuilder: the operands as matrices, the
// indices of an implicit GEMM's input, the epilogue applied to a final sum,
// grouped rasterization of the blocks, and the marked ops' removal.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_CODEGEN_GPUGEMMKERNEL_H
#define KE_LIB_CODEGEN_GPUGEMMKERNEL_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>

namespace ke {

/// A channels-last 1-D, 2-D or 3-D convolution as an implicit GEMM: M the
/// output pixels (n, [od,] [oh,] ow), N the filters, K ([kd,] [kh,] kw, c) with
/// c innermost, so that a K chunk of channels is contiguous in one input
/// pixel. A 2-D one has depth 1 everywhere, a 1-D one height 1 too.
struct ConvGeometry {
  /// Spatial dimensions: 1, 2 or 3.
  unsigned spatial = 2;
  int64_t outD = 1, outH = 0, outW = 0;
  int64_t filterD = 1, filterH = 0, filterW = 0, channels = 0;
  int64_t strideD = 1, strideH = 1, strideW = 1;
  int64_t dilationD = 1, dilationH = 1, dilationW = 1;
};

/// A marked matmul, batch matmul or convolution read as a GEMM.
struct MarkedGemm {
  mlir::linalg::LinalgOp op;
  /// Set for linalg.conv_1d_nwc_wcf, conv_2d_nhwc_hwcf and
  /// conv_3d_ndhwc_dhwcf (A the input, B the filter as a ([kd] [kh] kw c) x
  /// f matrix, C the output as a (n [od] [oh] ow) x f one).
  std::optional<ConvGeometry> conv;
  /// A stored K x M, B stored N x K (K innermost).
  bool batched = false, transposedA = false, transposedB = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  mlir::Value a, b, c;
  /// The linalg.fill of the accumulator, right before `op`, and its value,
  /// added to each final sum.
  mlir::Operation *fill = nullptr;
  mlir::Value init;
  /// The elementwise consumer marked as the epilogue, applied to each final
  /// sum before it is stored (then `c` is a temporary that is never
  /// written), or null.
  mlir::linalg::LinalgOp epilogue;
  /// How the epilogue reads the GEMM's result: from its loops to the
  /// anchor's (n, oh, ow, f or batch, m, n) indices. The identity but for a
  /// builder that stores through a permutation (analyzeMarkedGemm's
  /// `allowPermutedEpilogue`), e.g. a channels-last convolution's result
  /// written back channels-first.
  mlir::AffineMap epilogueRead;
  /// The operands' element type (A's and B's are the same).
  mlir::Type element;

  int64_t elementBytes() const { return element.getIntOrFloatBitWidth() / 8; }
  /// Whether the epilogue reads the result through a permutation (then its
  /// output is no matrix of the GEMM's rows and columns).
  bool hasPermutedEpilogue() const {
    return epilogue && !epilogueRead.isIdentity();
  }
};

/// Reads `op`, marked with attribute `mark` (also the diagnostics' prefix),
/// as a GEMM: a bufferized linalg.matmul, linalg.batch_matmul (A stored
/// M x K or K x M, B K x N or N x K), linalg.conv_1d_nwc_wcf,
/// linalg.conv_2d_nhwc_hwcf or linalg.conv_3d_ndhwc_dhwcf with
/// static, contiguous operands of one f16, bf16 or f32 element type and an
/// f32 result; the linalg.fill of its accumulator right before it; the
/// consumer marked `epilogueMark`, if any, which reads the result through
/// the identity or, with `allowPermutedEpilogue`, a permutation. A located
/// error otherwise.
mlir::FailureOr<MarkedGemm>
analyzeMarkedGemm(mlir::linalg::LinalgOp op, llvm::StringRef mark,
                  llvm::StringRef epilogueMark,
                  bool allowPermutedEpilogue = false);

/// Integer knob `name` of the dictionary `mark` put on `op`; a located
/// error when it is missing.
mlir::FailureOr<int64_t> readIntegerKnob(mlir::Operation *op,
                                         mlir::DictionaryAttr knobs,
                                         llvm::StringRef mark,
                                         llvm::StringRef name);

/// The ops under `root` marked `mark`, in order (collected before any is
/// replaced: building a kernel erases them).
mlir::SmallVector<mlir::linalg::LinalgOp> collectMarkedOps(mlir::Operation *root,
                                                           llvm::StringRef mark);

/// The parts of a GEMM kernel that do not depend on the matrix unit.
class GemmKernelBuilder {
protected:
  /// Builds before the marked op.
  explicit GemmKernelBuilder(const MarkedGemm &marked)
      : gemm(marked), b(gemm.op->getLoc(), gemm.op.getOperation()) {}

  mlir::Value index(int64_t v);
  /// A convolution's input element of GEMM row `row` (an output pixel)
  /// and column `k` of A (a filter tap's channel).
  mlir::SmallVector<mlir::Value> convInputIndices(mlir::Value row,
                                                  mlir::Value k);
  /// The anchor's loop indices of GEMM row `row`, column `column`: (row,
  /// column), `batchId` first for a batch matmul; for a convolution (n,
  /// [od,] oh, ow, f).
  mlir::SmallVector<mlir::Value> anchorIndices(mlir::Value row,
                                               mlir::Value column);
  /// A convolution's GEMM operands as matrices: the filter (kh kw c) x f,
  /// an output (n oh ow) x f; other operands as they are.
  mlir::Value asMatrix(mlir::Value memref);
  /// The final value of the sum at `row`, `column`: the fill's value added,
  /// then the epilogue applied (its other operands loaded through their
  /// maps, linalg.index the anchor's indices).
  mlir::Value finish(mlir::Value sum, mlir::Value row, mlir::Value column);
  /// Where final values go: the epilogue's result or the GEMM's, as a
  /// matrix (not for a permuted epilogue: see epilogueIndices).
  mlir::Value resultMatrix();
  /// The epilogue's loop indices of GEMM row `row`, column `column`, which
  /// index its output: the anchor's indices, permuted as the epilogue reads
  /// them.
  mlir::SmallVector<mlir::Value> epilogueIndices(mlir::Value row,
                                                 mlir::Value column);
  /// The (tile row, tile column) a block computes, from its ids along y and
  /// x: grouped rasterization, so that consecutive blocks (x fastest) take
  /// `group` tile rows of each tile column and the blocks in flight share
  /// their B (and A) tiles in L2; `group` 1 is row-major.
  std::pair<mlir::Value, mlir::Value> rasterize(mlir::Value blockY,
                                                mlir::Value blockX,
                                                int64_t tileRows,
                                                int64_t tileCols,
                                                int64_t group);
  /// Whether (`row`, `column`) lies inside the result, for blocks of
  /// `blockM` x `blockN`: null where every tile is whole along both.
  mlir::Value insideResult(mlir::Value row, mlir::Value column,
                           int64_t blockM, int64_t blockN);
  /// Builds `body` where (`row`, `column`) lies inside the result: under an
  /// scf.if of insideResult, or as it is where every tile is whole.
  void insideResultOnly(mlir::Value row, mlir::Value column, int64_t blockM,
                        int64_t blockN, llvm::function_ref<void()> body);
  /// Starts the body of `launch` (a grid of tile columns along x, tile rows
  /// along y, batches or splits along z; with `linearGrid`, both tile
  /// counts along x, tile columns fastest, for more tile rows than y
  /// takes): its terminator, then `batchId`, the block's first row `mBase`
  /// and column `nBase` (grouped rasterization by `groupM`, see rasterize)
  /// and `thread`; the builder is left at the start of the body.
  void beginBlockTile(mlir::gpu::LaunchOp launch, int64_t blockM,
                      int64_t blockN, int64_t groupM,
                      bool linearGrid = false);
  /// Erases the marked op, its fill, its epilogue and the temporary the
  /// epilogue read, once the kernel replaces them.
  void eraseMarkedOps();

  MarkedGemm gemm;
  mlir::ImplicitLocOpBuilder b;
  /// Set by beginBlockTile: the block's batch (a batch matmul's; its split
  /// with split K), its first row and column of the result, its thread.
  mlir::Value batchId, mBase, nBase, thread;

private:
  mlir::Value applyEpilogue(mlir::Value value, mlir::Value row,
                            mlir::Value column);
};

} // namespace ke

#endif // KE_LIB_CODEGEN_GPUGEMMKERNEL_H

//===- GpuWgmmaAnalysis.cpp - What a wgmma kernel is built from ----------===//
//
// analyzeWgmmaMatmul (GpuWgmma.h): reads the knobs of a matmul, batch
// matmul or channels-last convolution that gpu.wgmma's script marked, the
// GEMM itself through analyzeMarkedGemm (GpuGemmKernel.h), and checks that
// ke-gpu-wgmma-matmuls can build its kernel (the sketch checks the same;
// a hand-written mark gets located errors). Also the descriptors' constant
// fields.
//
//===----------------------------------------------------------------------===//

#include "GpuWgmma.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace ke;

namespace {

/// What wgmma needs beyond a GEMM: element types it takes in each layout,
/// rows cp.async can copy, tiles that fit.
LogicalResult checkWgmmaFit(WgmmaMatmul &mm) {
  Operation *op = mm.op;
  // A K tile (128 bytes) must be one filter tap's channels.
  if (mm.conv && mm.conv->channels % mm.kTile())
    return op->emitError("ke.wgmma: a convolution's channels must be a "
                         "multiple of ")
           << mm.kTile();
  // (TF32 operands stored K x M or K x N are transposed by a kernel of
  // their own first: wgmma transposes only 16-bit tiles.)
  // The sketch checks these; a hand-written attribute gets the same rules.
  // Partial tiles are zero-filled and their stores masked; every row of
  // every operand must start 16 bytes aligned for cp.async.
  // (A's rows run along K, or along M when it is stored K x M; B's along N,
  // or K when stored N x K; the result is stored in pairs.)
  int64_t vector = kCopyBytes / mm.elementBytes();
  bool aKMajor = !mm.transposedA || mm.element.isF32(),
       bKMajor = mm.transposedB || mm.element.isF32();
  if ((aKMajor ? mm.k : mm.m) % vector || (bKMajor ? mm.k : mm.n) % vector ||
      mm.n % 2)
    return op->emitError("ke.wgmma: the rows of A and B must be multiples "
                         "of ")
           << vector << " elements (16 bytes) and N even, not " << mm.m << "x"
           << mm.n << "x" << mm.k;
  if (mm.blockM % kInstrM || mm.blockM > 4 * kInstrM || mm.blockN % 64 ||
      mm.blockN > 256 || mm.stages < 3 || mm.kTiles() < mm.stages - 2)
    return op->emitError("ke.wgmma: block ")
           << mm.blockM << "x" << mm.blockN << " with " << mm.stages
           << " stages does not fit a " << mm.m << "x" << mm.n << "x" << mm.k
           << " matmul (blocks multiples of 64 up to 256x256, at least 3 "
              "stages, at most "
           << mm.kTiles() << " K tiles of " << mm.kTile() << " + 2)";
  if (mm.splitK < 1 || (mm.splitK > 1 && mm.batched) ||
      mm.kTiles() % mm.splitK || mm.kTiles() / mm.splitK < mm.stages - 2)
    return op->emitError("ke.wgmma: split_k ")
           << mm.splitK << " does not split " << mm.kTiles()
           << " K tiles evenly into parts of at least " << mm.stages - 2
           << " (and a batch matmul's blocks along z are its batch)";
  if (mm.tma && mm.conv)
    return op->emitError("ke.wgmma: tma copies whole boxes, and a "
                         "convolution's A rows are gathered from its input");
  if (mm.tileRows() > 65535)
    return op->emitError("ke.wgmma: ")
           << mm.tileRows() << " tile rows exceed the grid's y (65535)";
  int64_t chunksPerRow = kSwizzleRowBytes / kCopyBytes;
  if ((mm.blockM * chunksPerRow) % mm.threads() ||
      (mm.blockN * chunksPerRow) % mm.threads())
    return op->emitError("ke.wgmma: the tiles do not split evenly over ")
           << mm.threads() << " threads";
  return success();
}

} // namespace

FailureOr<WgmmaMatmul> ke::analyzeWgmmaMatmul(linalg::LinalgOp op) {
  WgmmaMatmul mm;
  auto knobs = op->getAttrOfType<DictionaryAttr>(kWgmmaAttr);
  if (!knobs)
    return op->emitError("ke.wgmma must be a dictionary");
  FailureOr<int64_t> blockM = readIntegerKnob(op, knobs, kWgmmaAttr, "block_m"),
                     blockN = readIntegerKnob(op, knobs, kWgmmaAttr, "block_n"),
                     stages = readIntegerKnob(op, knobs, kWgmmaAttr, "stages");
  if (failed(blockM) || failed(blockN) || failed(stages))
    return failure();
  FailureOr<MarkedGemm> gemm = analyzeMarkedGemm(op, kWgmmaAttr, kEpilogueAttr);
  if (failed(gemm))
    return failure();
  static_cast<MarkedGemm &>(mm) = *gemm;
  mm.blockM = *blockM;
  mm.blockN = *blockN;
  mm.stages = *stages;
  // Optional: row-major without it.
  if (auto group = knobs.getAs<IntegerAttr>("group_m"))
    mm.groupM = group.getInt();
  if (mm.groupM < 1)
    return op->emitError("ke.wgmma: group_m must be positive");
  if (auto split = knobs.getAs<IntegerAttr>("split_k"))
    mm.splitK = split.getInt();
  if (auto tma = knobs.getAs<IntegerAttr>("tma"))
    mm.tma = tma.getInt();
  if (mm.tma < 0 || mm.tma > 2)
    return op->emitError("ke.wgmma: tma must be 0, 1 or 2");
  if (failed(checkWgmmaFit(mm)))
    return failure();
  return mm;
}

uint64_t ke::encodeWgmmaDescriptorFields(uint64_t leadingBytes,
                                         uint64_t strideBytes) {
  return ((leadingBytes >> 4) & 0x3fff) << 16 |
         ((strideBytes >> 4) & 0x3fff) << 32 | uint64_t(1) << 62;
}


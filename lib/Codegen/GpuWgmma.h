//===- GpuWgmma.h - Hopper wgmma kernels: what is built from what -*- C++ -*-===//
//
// Private to lib/Codegen (and its unit test). ke-gpu-wgmma-matmuls
// (GpuWgmmaMatmuls.cpp) builds a kernel from a WgmmaMatmul, which
// analyzeWgmmaMatmul (GpuWgmmaAnalysis.cpp) reads off an op gpu.wgmma's
// script marked (the GEMM itself through analyzeMarkedGemm, GpuGemmKernel.h); encodeWgmmaDescriptorFields gives the constant fields of
// the shared-memory matrix descriptors.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_CODEGEN_GPUWGMMA_H
#define KE_LIB_CODEGEN_GPUWGMMA_H

#include "GpuGemmKernel.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/MathExtras.h"

#include <cstdint>
#include <optional>

namespace ke {

/// The attribute gpu.wgmma's script puts on the matmul.
inline constexpr llvm::StringLiteral kWgmmaAttr = "ke.wgmma";
/// And on its elementwise consumer, when the kernel applies it.
inline constexpr llvm::StringLiteral kEpilogueAttr = "ke.wgmma.epilogue";
/// wgmma's M, and its K in bytes of operand (k16 for 16-bit types, k8
/// for TF32).
inline constexpr int64_t kInstrM = 64, kInstrKBytes = 32;
inline constexpr int64_t kWarpgroupThreads = 128;
/// Bytes of one swizzle row and of one 8-row swizzle atom.
inline constexpr int64_t kSwizzleRowBytes = 128, kSwizzleAtomBytes = 1024;
/// Bytes per cp.async.
inline constexpr int64_t kCopyBytes = 16;

/// What the kernel is built from: the marked GEMM and the knobs.
struct WgmmaMatmul : MarkedGemm {
  int64_t blockM = 0, blockN = 0, stages = 0;
  /// Block tile rows that sweep the columns together (grouped
  /// rasterization: their B tiles are shared in L2); 1 is row-major.
  int64_t groupM = 1;
  /// K split over this many blocks (grid z), each storing its partial sums
  /// to a scratch buffer that a second kernel adds up in split order,
  /// applying the fill's value and the epilogue; 1: no split.
  int64_t splitK = 1;
  /// 0: tiles copied by every thread's cp.async. 1: by TMA (one thread
  /// issues each tile's bulk copies, an mbarrier per stage counts their
  /// bytes), stages - 2 tiles ahead behind a block barrier per K tile. 2:
  /// TMA stages - 1 tiles ahead, each warpgroup releasing a stage through a
  /// second mbarrier per stage once its wgmma on it completed, no block
  /// barrier. Not for convolutions, whose A rows are gathered.
  int64_t tma = 0;
  int64_t warpgroups() const { return blockM / kInstrM; }
  int64_t threads() const { return warpgroups() * kWarpgroupThreads; }
  /// K elements per stage: one 128-byte swizzle row.
  int64_t kTile() const { return kSwizzleRowBytes / elementBytes(); }
  /// K elements per wgmma.
  int64_t instrK() const { return kInstrKBytes / elementBytes(); }
  /// Tiles along M, N and K, the last one partial where the tile does not
  /// divide the extent.
  int64_t tileRows() const { return llvm::divideCeil(m, blockM); }
  int64_t tileCols() const { return llvm::divideCeil(n, blockN); }
  int64_t kTiles() const { return llvm::divideCeil(k, kTile()); }
  int64_t aStageBytes() const { return blockM * kSwizzleRowBytes; }
  int64_t bStageBytes() const { return blockN * kSwizzleRowBytes; }
  int64_t tileBytes() const { return stages * (aStageBytes() + bStageBytes()); }
  /// The tiles, with TMA one or two 8-byte mbarriers per stage after them,
  /// and the slack that aligns them to a swizzle atom.
  int64_t sharedBytes() const {
    return tileBytes() + 8 * stages * tma + kSwizzleAtomBytes;
  }
};


/// The op gpu.wgmma's script marked (`ke.wgmma`), with its fill and marked
/// epilogue, as the kernel needs it; a located error when the kernel cannot
/// be built from it.
mlir::FailureOr<WgmmaMatmul> analyzeWgmmaMatmul(mlir::linalg::LinalgOp op);

/// The fields of a wgmma shared-memory matrix descriptor other than its
/// start address, for a tile in the 128-byte swizzle (PTX ISA, "Matrix
/// Descriptor Format": bits 16-29 hold `leadingBytes` >> 4, bits 32-45
/// `strideBytes` >> 4, bits 62-63 the layout, 1 for the 128-byte swizzle;
/// the base offset, bits 49-51, is 0 for tiles aligned to 1024 bytes).
/// The start address >> 4 goes in bits 0-13.
uint64_t encodeWgmmaDescriptorFields(uint64_t leadingBytes,
                                     uint64_t strideBytes);

} // namespace ke

#endif // KE_LIB_CODEGEN_GPUWGMMA_H

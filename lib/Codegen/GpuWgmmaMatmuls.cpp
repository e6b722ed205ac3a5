//===- GpuWgmmaMatmuls.cpp - Hopper matmul kernels on wgmma ---------------===//
//
// ke-gpu-wgmma-matmuls (ke/Codegen/Passes.td), the first step of the CUDA
// lowering for sm_90a. The gpu.wgmma sketch (lib/Sketch/GpuWgmmaRule.cpp)
// bufferizes a 16-bit matmul, batch matmul or channels-last convolution and
// marks it with its knobs (`ke.wgmma = {block_m, block_n, stages, group_m,
// split_k}`); GpuWgmmaAnalysis.cpp reads it (GpuWgmma.h), and here it
// becomes one kernel (two with split_k):
//
//   grid (N / block_n, M / block_m rounded up, batch or split_k), block
//     ids mapped so that group_m tile rows sweep the columns together,
//     block_m / 64 warpgroups
//   shared memory (dynamic, 1024-byte aligned): `stages` A tiles
//     block_m x 128 bytes of K (64 16-bit elements, 32 f32 ones for TF32)
//     and B tiles, each row 128 bytes in the 128-byte swizzle
//     that wgmma's descriptors name (16-byte chunk c of row r stored at
//     chunk c ^ (r % 8));
//   prologue: tiles 0 .. stages - 3 copied with cp.async, a group each;
//     with tma = 1, thread 0 initializes an mbarrier per stage (after the
//     tiles) and issues the tiles' TMA bulk copies instead, each stage's
//     barrier expecting its bytes;
//   k loop: wait for tile k (cp.async.wait_group stages - 3, then fence the
//     generic proxy's writes for the async proxy; with TMA, the stage's
//     mbarrier at phase (k / stages) & 1), barrier; four
//     wgmma.mma_async m64n{block_n}k16 (k8 for TF32) per warpgroup on tile
//     k, committed as
//     one group; copy tile k + stages - 2 into the buffer of tile k - 2
//     (every warpgroup finished it before the barrier; with TMA, thread 0
//     alone); wait until one wgmma group is in flight;
//   epilogue: wait for all; each thread stores its accumulators (the
//     m16n8 layout per warp: row lane / 4 (+ 8), columns 2 (lane % 4) (+ 1)
//     of each 8-column slab) as pairs, adding the fill's value and applying
//     the consumer the sketch fused (`ke.wgmma.epilogue`: bias, activation,
//     the cast to bf16), its other operands loaded per element; with
//     split_k the raw sums go to a scratch buffer and a second kernel adds
//     the parts in order, then does the same.
//
// Partial tiles: chunks past M, N or K are zero-filled (cp.async with a
// source size of 0; TMA fills a box's elements out of bounds with zeros),
// pairs past M or N not stored.
//
// TMA: the host function makes a tensor map of each operand (makeTensorMap,
// GpuLaunches.h: the box of one tile, or of one 64-column slab of an
// MN-major tile, in the same 128-byte swizzle), which the runners encode
// with cuTensorMapEncodeTiled and pass by value (ke-gpu-align-kernel-
// pointers makes those parameters grid constants). A convolution's A rows
// are output pixels, each K tile one filter tap's 64 channels of an input
// pixel.
//
// An operand stored with K innermost (A M x K, B N x K) has K-major tiles
// (rows of 128 bytes of K); one stored K x M or K x N has MN-major tiles
// (64-column slabs of K rows) read with wgmma's transpose (16-bit types
// only). The descriptors (see encodeWgmmaDescriptorFields) say which.
//
//===----------------------------------------------------------------------===//

#include "GpuLaunches.h"
#include "GpuWgmma.h"

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace ke;

namespace ke {
#define GEN_PASS_DEF_GPUWGMMAMATMULSPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// Builds the kernel of one marked matmul in place of it and its fill.
class WgmmaKernelBuilder : GemmKernelBuilder {
public:
  explicit WgmmaKernelBuilder(WgmmaMatmul matmul)
      : GemmKernelBuilder(matmul), mm(matmul) {}

  void build();

private:
  Value i64(int64_t v) {
    return b.create<arith::ConstantIntOp>(b.getI64Type(), v);
  }
  /// The swizzled column of 16-byte chunk `chunk` in row `row`, in elements.
  Value swizzledColumn(Value row, Value chunk);
  /// cp.async of k tile `kTile` into buffer `stage`.
  void copyTiles(Value kTile, Value stage);
  /// With tma: the host's tensor maps of A and B (the box of one tile, or
  /// of one 64-column slab of an MN-major tile).
  void makeTensorMaps();
  /// With tma, in thread 0: the mbarrier of `stage` expects a stage's
  /// bytes, and the bulk copies of k tile `kTile` into it are issued.
  void loadTiles(Value kTile, Value stage);
  /// The shared-memory pointer (!llvm.ptr<3>) at byte `offset` (i64) past
  /// the tiles' base.
  Value sharedPointer(Value offset);
  /// Stage `stage`'s mbarrier (its tiles landed), and with tma = 2 its
  /// release barrier (every warpgroup is done with it).
  Value stageBarrier(Value stage);
  Value releaseBarrier(Value stage);
  /// Waits until `barrier` completed the phase of parity `parity` (index).
  void waitParity(Value barrier, Value parity);
  /// With tma = 2, after K tile `kTile`'s wgmma group is issued and the one
  /// before it completed: each warpgroup releases tile k - 1's stage; thread
  /// `leader` waits until all have, then loads tile k - 1 + stages there.
  void releaseAndRefill(Value kTile, int64_t kTiles, Value leader,
                        llvm::function_ref<Value(Value)> global);
  /// The descriptor of the tile at shared byte address `address`.
  Value descriptor(Value address, uint64_t fields);
  /// One stage: kTile / instrK (four) wgmma steps on buffer `stage`.
  Value multiply(Value stage, Value acc);
  void storeAccumulators(Value acc);
  /// With split_k: the kernel that adds the partial sums up, in split
  /// order, adds the fill's value, applies the epilogue and stores.
  void buildSplitReduction();
  /// A kernel that stores `matrix` ([batch x] rows x cols) transposed into a
  /// new scratch buffer of the host function, which it returns: 32 x 32
  /// tiles through shared memory, read and written along rows.
  Value transposeToScratch(Value matrix);

  WgmmaMatmul mm;
  Value warpgroup;
  /// With split_k: the block's split (grid z) and the partial sums.
  Value splitId, partials;
  /// A and B as the kernel reads them (see asMatrix; for TF32, transposed
  /// copies where they are stored K x M or K x N).
  Value aMatrix, bMatrix;
  Value aTiles, bTiles, sharedBase;
  /// With tma: the tensor maps (generic pointers, kernel parameters).
  Value aMap, bMap;
  LLVM::LLVMStructType accType;
};

Value WgmmaKernelBuilder::swizzledColumn(Value row, Value chunk) {
  Value phase = b.create<arith::RemUIOp>(row, index(8));
  Value swizzled = b.create<arith::XOrIOp>(chunk, phase);
  return b.create<arith::MulIOp>(swizzled,
                                 index(kCopyBytes / mm.elementBytes()));
}

void WgmmaKernelBuilder::copyTiles(Value kTile, Value stage) {
  int64_t vector = kCopyBytes / mm.elementBytes();
  int64_t chunksPerRow = kSwizzleRowBytes / kCopyBytes;
  Value kBase = b.create<arith::MulIOp>(kTile, index(mm.kTile()));
  // `valid` (null: always) says whether the chunk lies inside the operand;
  // a chunk outside (a partial tile's) reads nothing from index 0 and
  // zero-fills its 16 bytes, which add nothing to the products.
  auto copy = [&](Value src, SmallVector<Value> srcIndices, Value dst,
                  SmallVector<Value> dstIndices, Value valid) {
    Value srcElements;
    if (valid) {
      for (Value &i : srcIndices)
        i = b.create<arith::SelectOp>(valid, i, index(0));
      srcElements = b.create<arith::SelectOp>(valid, index(vector), index(0));
    }
    if (mm.batched)
      srcIndices.insert(srcIndices.begin(), batchId);
    b.create<nvgpu::DeviceAsyncCopyOp>(
        nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst, dstIndices,
        src, srcIndices, b.getIndexAttr(vector), srcElements,
        b.getUnitAttr());
  };
  // True where `value` < `extent`, null where every tile is whole.
  auto within = [&](Value valid, Value value, int64_t extent, bool partial) {
    if (!partial)
      return valid;
    Value inside = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, value,
                                           index(extent));
    return valid ? b.create<arith::AndIOp>(valid, inside).getResult()
                 : inside;
  };
  bool partialK = mm.k % mm.kTile() != 0;
  // A (and B stored N x K): rows of 128 bytes of K, 8 chunks each.
  auto copyKMajor = [&](Value src, Value tiles, int64_t rows, Value rowBase,
                        int64_t extent, bool implicit) {
    bool partialRows = extent % rows != 0;
    for (int64_t i = 0; i < rows * chunksPerRow / mm.threads(); ++i) {
      Value id = b.create<arith::AddIOp>(thread, index(i * mm.threads()));
      Value row = b.create<arith::DivUIOp>(id, index(chunksPerRow));
      Value chunk = b.create<arith::RemUIOp>(id, index(chunksPerRow));
      Value srcRow = b.create<arith::AddIOp>(rowBase, row);
      Value srcCol = b.create<arith::AddIOp>(
          kBase, b.create<arith::MulIOp>(chunk, index(vector)));
      Value valid = within(within(Value(), srcRow, extent, partialRows),
                           srcCol, mm.k, partialK);
      // A convolution's row is an output pixel: clamp it before it is
      // decomposed (the copy's own clamp comes after).
      if (implicit && valid)
        srcRow = b.create<arith::SelectOp>(valid, srcRow, index(0));
      SmallVector<Value> srcIndices =
          implicit ? convInputIndices(srcRow, srcCol)
                   : SmallVector<Value>{srcRow, srcCol};
      copy(src, srcIndices, tiles, {stage, row, swizzledColumn(row, chunk)},
           valid);
    }
  };
  // An operand stored K x M or K x N: 64 K rows of `columns` M or N
  // elements, kept as columns / 64 slabs of 64 x 64 (one swizzle row of M
  // or N per K row).
  auto copyMnMajor = [&](Value src, Value tiles, int64_t columns,
                         Value columnBase, int64_t extent) {
    bool partialColumns = extent % columns != 0;
    int64_t rowChunks = columns / vector;
    for (int64_t i = 0; i < mm.kTile() * rowChunks / mm.threads(); ++i) {
      Value id = b.create<arith::AddIOp>(thread, index(i * mm.threads()));
      Value row = b.create<arith::DivUIOp>(id, index(rowChunks));
      Value column = b.create<arith::RemUIOp>(id, index(rowChunks));
      Value slab = b.create<arith::DivUIOp>(column, index(chunksPerRow));
      Value chunk = b.create<arith::RemUIOp>(column, index(chunksPerRow));
      Value srcRow = b.create<arith::AddIOp>(kBase, row);
      Value srcCol = b.create<arith::AddIOp>(
          columnBase, b.create<arith::MulIOp>(column, index(vector)));
      Value valid = within(within(Value(), srcRow, mm.k, partialK), srcCol,
                           extent, partialColumns);
      copy(src, {srcRow, srcCol}, tiles,
           {stage, slab, row, swizzledColumn(row, chunk)}, valid);
    }
  };
  if (mm.transposedA)
    copyMnMajor(aMatrix, aTiles, mm.blockM, mBase, mm.m);
  else
    copyKMajor(aMatrix, aTiles, mm.blockM, mBase, mm.m, mm.conv.has_value());
  if (mm.transposedB)
    copyKMajor(bMatrix, bTiles, mm.blockN, nBase, mm.n, false);
  else
    copyMnMajor(bMatrix, bTiles, mm.blockN, nBase, mm.n);
}

void WgmmaKernelBuilder::makeTensorMaps() {
  int64_t slab = kSwizzleRowBytes / mm.elementBytes();
  auto box = [&](Value matrix, std::initializer_list<int64_t> rowsCols) {
    SmallVector<int64_t> dims(rowsCols);
    if (cast<MemRefType>(matrix.getType()).getRank() == 3)
      dims.insert(dims.begin(), 1);
    return dims;
  };
  // K-major: block rows of one swizzle row of K; MN-major: K tile rows of
  // one 64-column slab.
  aMap = makeTensorMap(b, b.getLoc(), aMatrix,
                       mm.transposedA ? box(aMatrix, {mm.kTile(), slab})
                                      : box(aMatrix, {mm.blockM, mm.kTile()}));
  bMap = makeTensorMap(b, b.getLoc(), bMatrix,
                       mm.transposedB ? box(bMatrix, {mm.blockN, mm.kTile()})
                                      : box(bMatrix, {mm.kTile(), slab}));
}

Value WgmmaKernelBuilder::sharedPointer(Value offset) {
  Value address = b.create<arith::AddIOp>(sharedBase, offset);
  return b.create<LLVM::IntToPtrOp>(
      LLVM::LLVMPointerType::get(b.getContext(),
                                 unsigned(NVVM::NVVMMemorySpace::Shared)),
      address);
}

Value WgmmaKernelBuilder::stageBarrier(Value stage) {
  Value stage64 = b.create<arith::IndexCastUIOp>(b.getI64Type(), stage);
  return sharedPointer(b.create<arith::AddIOp>(
      i64(mm.tileBytes()), b.create<arith::MulIOp>(stage64, i64(8))));
}

void WgmmaKernelBuilder::releaseAndRefill(
    Value kTile, int64_t kTiles, Value leader,
    llvm::function_ref<Value(Value)> global) {
  auto after = b.create<scf::IfOp>(
      b.create<arith::CmpIOp>(arith::CmpIPredicate::uge, kTile, index(1)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(after.thenBlock());
  Value previous = b.create<arith::SubIOp>(kTile, index(1));
  Value stage = b.create<arith::RemUIOp>(previous, index(mm.stages));
  Value first = b.create<arith::CmpIOp>(
      arith::CmpIPredicate::eq,
      b.create<arith::RemUIOp>(thread, index(kWarpgroupThreads)), index(0));
  auto release = b.create<scf::IfOp>(first, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(release.thenBlock());
    b.create<NVVM::MBarrierArriveOp>(Type(), releaseBarrier(stage), Value());
  }
  Value next = b.create<arith::AddIOp>(previous, index(mm.stages));
  auto refill = b.create<scf::IfOp>(
      b.create<arith::AndIOp>(
          leader, b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, next,
                                          index(kTiles))),
      /*withElseRegion=*/false);
  b.setInsertionPointToStart(refill.thenBlock());
  waitParity(releaseBarrier(stage),
             b.create<arith::AndIOp>(
                 b.create<arith::DivUIOp>(previous, index(mm.stages)),
                 index(1)));
  loadTiles(global(next), stage);
}

Value WgmmaKernelBuilder::releaseBarrier(Value stage) {
  return stageBarrier(b.create<arith::AddIOp>(stage, index(mm.stages)));
}

void WgmmaKernelBuilder::waitParity(Value barrier, Value parity) {
  b.create<NVVM::MBarrierTryWaitParityOp>(
      barrier, b.create<arith::IndexCastUIOp>(b.getI32Type(), parity),
      b.create<arith::ConstantIntOp>(b.getI32Type(), 0x989680));
}

void WgmmaKernelBuilder::loadTiles(Value kTile, Value stage) {
  Value barrier = stageBarrier(stage);
  b.create<NVVM::MBarrierArriveExpectTxOp>(
      Type(), barrier,
      b.create<arith::ConstantIntOp>(b.getI32Type(),
                                     mm.aStageBytes() + mm.bStageBytes()),
      NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/Value());
  auto i32 = [&](Value v) {
    return b.create<arith::IndexCastUIOp>(b.getI32Type(), v).getResult();
  };
  Value kBase = i32(b.create<arith::MulIOp>(kTile, index(mm.kTile())));
  Value stage64 = b.create<arith::IndexCastUIOp>(b.getI64Type(), stage);
  Value aStage = b.create<arith::MulIOp>(stage64, i64(mm.aStageBytes()));
  Value bStage = b.create<arith::AddIOp>(
      i64(mm.stages * mm.aStageBytes()),
      b.create<arith::MulIOp>(stage64, i64(mm.bStageBytes())));
  // Coordinates innermost first: (column, row[, batch]) of the box's
  // first element.
  auto copy = [&](Value map, Value matrix, Value offset, Value column,
                  Value row) {
    SmallVector<Value> coordinates = {column, row};
    if (cast<MemRefType>(matrix.getType()).getRank() == 3)
      coordinates.push_back(i32(batchId));
    // The classic form (sm_90): a shared::cluster destination, which a
    // block's own shared::cta address is.
    Value destination = b.create<LLVM::AddrSpaceCastOp>(
        LLVM::LLVMPointerType::get(
            b.getContext(), unsigned(NVVM::NVVMMemorySpace::SharedCluster)),
        sharedPointer(offset));
    b.create<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(
        destination, map, coordinates, barrier, ValueRange{},
        /*multicastMask=*/Value(), /*l2CacheHint=*/Value(),
        NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
        /*group=*/nullptr, /*predicate=*/Value());
  };
  // An MN-major tile is 64-column slabs of kTile rows, each a box.
  int64_t slab = kSwizzleRowBytes / mm.elementBytes();
  int64_t slabBytes = mm.kTile() * kSwizzleRowBytes;
  auto copyOperand = [&](Value map, Value matrix, Value offset, Value base,
                         int64_t columns, bool kMajor) {
    if (kMajor)
      return copy(map, matrix, offset, kBase, i32(base));
    for (int64_t j = 0; j < columns / slab; ++j)
      copy(map, matrix, b.create<arith::AddIOp>(offset, i64(j * slabBytes)),
           i32(b.create<arith::AddIOp>(base, index(j * slab))), kBase);
  };
  copyOperand(aMap, aMatrix, aStage, mBase, mm.blockM, !mm.transposedA);
  copyOperand(bMap, bMatrix, bStage, nBase, mm.blockN, mm.transposedB);
}

Value WgmmaKernelBuilder::descriptor(Value address, uint64_t fields) {
  Value start = b.create<arith::AndIOp>(
      b.create<arith::ShRUIOp>(address, i64(4)), i64(0x3fff));
  return b.create<arith::OrIOp>(start, i64(fields));
}

Value WgmmaKernelBuilder::multiply(Value stage, Value acc) {
  MLIRContext *ctx = b.getContext();
  Value stage64 = b.create<arith::IndexCastUIOp>(b.getI64Type(), stage);
  Value aStage = b.create<arith::AddIOp>(
      sharedBase, b.create<arith::MulIOp>(stage64, i64(mm.aStageBytes())));
  // This warpgroup's 64 rows of A: 64 K-major rows, or one MN-major slab
  // of 64 M columns (kTile rows of 128 bytes).
  Value warpgroup64 = b.create<arith::IndexCastUIOp>(b.getI64Type(), warpgroup);
  int64_t warpgroupBytes =
      (mm.transposedA ? mm.kTile() : kInstrM) * kSwizzleRowBytes;
  Value aRows = b.create<arith::AddIOp>(
      aStage, b.create<arith::MulIOp>(warpgroup64, i64(warpgroupBytes)));
  Value bStage = b.create<arith::AddIOp>(
      sharedBase,
      b.create<arith::AddIOp>(
          i64(mm.stages * mm.aStageBytes()),
          b.create<arith::MulIOp>(stage64, i64(mm.bStageBytes()))));
  // K-major tiles: 8-row atoms 1024 bytes apart (stride); the leading
  // offset is unused with a 128-byte swizzle. MN-major tiles: 64-column
  // slabs (the leading offset) of kTile K rows, 8-row atoms 1024 bytes
  // apart.
  uint64_t kMajor = ke::encodeWgmmaDescriptorFields(1 << 4, kSwizzleAtomBytes);
  uint64_t mnMajor = ke::encodeWgmmaDescriptorFields(
      mm.kTile() * kSwizzleRowBytes, kSwizzleAtomBytes);
  Value descA = descriptor(aRows, mm.transposedA ? mnMajor : kMajor);
  Value descB = descriptor(bStage, mm.transposedB ? kMajor : mnMajor);
  auto wgmmaType = mm.element.isBF16()  ? NVVM::WGMMATypes::bf16
                   : mm.element.isF16() ? NVVM::WGMMATypes::f16
                                        : NVVM::WGMMATypes::tf32;
  auto typeAttr = NVVM::WGMMATypesAttr::get(ctx, wgmmaType);
  auto one = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);
  // A "row" and B "col" are K-major (no transpose); A "col" and B "row"
  // MN-major.
  auto layoutA = NVVM::MMALayoutAttr::get(
      ctx, mm.transposedA ? NVVM::MMALayout::col : NVVM::MMALayout::row);
  auto layoutB = NVVM::MMALayoutAttr::get(
      ctx, mm.transposedB ? NVVM::MMALayout::col : NVVM::MMALayout::row);
  b.create<NVVM::WgmmaFenceAlignedOp>();
  for (int64_t step = 0; step < mm.kTile() / mm.instrK(); ++step) {
    // K-major: 16 elements further along the swizzle row (32 bytes; the
    // hardware applies the swizzle to the address). MN-major: 16 K rows
    // further, two atoms.
    int64_t kMajorOffset = step * kInstrKBytes;
    int64_t mnMajorOffset = step * mm.instrK() * kSwizzleRowBytes;
    int64_t aOffset = mm.transposedA ? mnMajorOffset : kMajorOffset;
    int64_t bOffset = mm.transposedB ? kMajorOffset : mnMajorOffset;
    Value stepA = b.create<arith::AddIOp>(descA, i64(aOffset >> 4));
    Value stepB = b.create<arith::AddIOp>(descB, i64(bOffset >> 4));
    acc = b.create<NVVM::WgmmaMmaAsyncOp>(
        accType, acc, stepA, stepB,
        NVVM::MMAShapeAttr::get(ctx, kInstrM, mm.blockN, mm.instrK()),
        typeAttr, typeAttr,
        NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
        NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one), one, one,
        layoutA, layoutB,
        /*satfinite=*/nullptr);
  }
  b.create<NVVM::WgmmaGroupSyncAlignedOp>();
  return acc;
}

void WgmmaKernelBuilder::storeAccumulators(Value acc) {
  // Per warp of the warpgroup, 16 rows; per lane, rows lane / 4 and
  // lane / 4 + 8, columns 2 (lane % 4) and the next of every 8-column slab.
  Value inGroup = b.create<arith::RemUIOp>(thread, index(kWarpgroupThreads));
  Value warp = b.create<arith::DivUIOp>(inGroup, index(32));
  Value lane = b.create<arith::RemUIOp>(inGroup, index(32));
  Value row = b.create<arith::AddIOp>(
      b.create<arith::AddIOp>(
          mBase, b.create<arith::MulIOp>(warpgroup, index(kInstrM))),
      b.create<arith::AddIOp>(b.create<arith::MulIOp>(warp, index(16)),
                              b.create<arith::DivUIOp>(lane, index(4))));
  Value rowBelow = b.create<arith::AddIOp>(row, index(8));
  Value column = b.create<arith::AddIOp>(
      nBase, b.create<arith::MulIOp>(
                 b.create<arith::RemUIOp>(lane, index(4)), index(2)));
  // With split_k the raw sums go to this split's partials.
  Value result = mm.splitK > 1 ? partials : resultMatrix();
  auto pairType = VectorType::get({2}, getElementTypeOrSelf(result.getType()));
  for (int64_t slab = 0; slab < mm.blockN / 8; ++slab) {
    Value col = b.create<arith::AddIOp>(column, index(slab * 8));
    for (int64_t half = 0; half < 2; ++half) {
      Value r = half ? rowBelow : row;
      // A partial tile's pairs outside the result are neither computed nor
      // stored (N is a multiple of 8: a pair is all in or all out).
      scf::IfOp guard;
      Value inside = insideResult(r, col, mm.blockM, mm.blockN);
      if (inside) {
        guard = b.create<scf::IfOp>(inside, /*withElseRegion=*/false);
        b.setInsertionPointToStart(guard.thenBlock());
      }
      SmallVector<Value> pair;
      for (int64_t e = 0; e < 2; ++e) {
        Value v = b.create<LLVM::ExtractValueOp>(acc, slab * 4 + half * 2 + e);
        if (mm.splitK == 1)
          v = finish(v, r, e ? b.create<arith::AddIOp>(col, index(1)) : col);
        pair.push_back(v);
      }
      Value vec = b.create<vector::FromElementsOp>(pairType, pair);
      SmallVector<Value> indices = {r, col};
      if (mm.batched)
        indices.insert(indices.begin(), batchId);
      if (mm.splitK > 1)
        indices.insert(indices.begin(), splitId);
      b.create<vector::StoreOp>(vec, result, indices);
      if (guard) {
        b.setInsertionPointAfter(guard);
        guard = nullptr;
      }
    }
  }
}

void WgmmaKernelBuilder::buildSplitReduction() {
  constexpr int64_t kThreads = 256;
  int64_t elements = mm.m * mm.n;
  auto launch = b.create<gpu::LaunchOp>(
      index(llvm::divideCeil(elements, kThreads)), index(1), index(1),
      index(kThreads), index(1), index(1));
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  b.create<gpu::TerminatorOp>();
  b.setInsertionPointToStart(&body);
  Value id = b.create<arith::AddIOp>(
      b.create<arith::MulIOp>(launch.getBlockIds().x, index(kThreads)),
      launch.getThreadIds().x);
  auto guard = b.create<scf::IfOp>(
      b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, id, index(elements)),
      /*withElseRegion=*/false);
  b.setInsertionPointToStart(guard.thenBlock());
  Value row = b.create<arith::DivUIOp>(id, index(mm.n));
  Value col = b.create<arith::RemUIOp>(id, index(mm.n));
  // Split order, so that the result does not depend on timing.
  Value sum = b.create<memref::LoadOp>(partials, ValueRange{index(0), row, col});
  for (int64_t split = 1; split < mm.splitK; ++split)
    sum = b.create<arith::AddFOp>(
        sum, b.create<memref::LoadOp>(partials,
                                      ValueRange{index(split), row, col}));
  Value result = resultMatrix();
  b.create<memref::StoreOp>(finish(sum, row, col), result,
                            ValueRange{row, col});
}

Value WgmmaKernelBuilder::transposeToScratch(Value matrix) {
  constexpr int64_t kTile = 32, kRowsPerPass = 8;
  auto type = cast<MemRefType>(matrix.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  SmallVector<int64_t> transposed(shape);
  std::swap(transposed[transposed.size() - 2], transposed.back());
  Value scratch = b.create<memref::AllocOp>(
      MemRefType::get(transposed, type.getElementType()));
  int64_t tileBytes = kTile * (kTile + 1) * mm.elementBytes();
  auto launch = b.create<gpu::LaunchOp>(
      index(llvm::divideCeil(cols, kTile)), index(llvm::divideCeil(rows, kTile)),
      index(mm.batch), index(kTile), index(kRowsPerPass), index(1),
      b.create<arith::ConstantIntOp>(b.getI32Type(), tileBytes));
  OpBuilder::InsertionGuard guard(b);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  b.create<gpu::TerminatorOp>();
  b.setInsertionPointToStart(&body);
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  Value dynamic = b.create<gpu::DynamicSharedMemoryOp>(MemRefType::get(
      {ShapedType::kDynamic}, b.getI8Type(), AffineMap(), workgroup));
  // A padded row: the column reads of the second pass hit 32 banks.
  Value tile = b.create<memref::ViewOp>(
      MemRefType::get({kTile, kTile + 1}, type.getElementType(), AffineMap(),
                      workgroup),
      dynamic, index(0), ValueRange{});
  Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
  Value rowBase = b.create<arith::MulIOp>(launch.getBlockIds().y, index(kTile));
  Value colBase = b.create<arith::MulIOp>(launch.getBlockIds().x, index(kTile));
  Value batchIndex = launch.getBlockIds().z;
  auto guarded = [&](Value row, Value col, int64_t rowExtent,
                     int64_t colExtent, llvm::function_ref<void()> body) {
    Value inside = b.create<arith::AndIOp>(
        b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, row,
                                index(rowExtent)),
        b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, col,
                                index(colExtent)));
    auto ifOp = b.create<scf::IfOp>(inside, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  };
  auto indices = [&](Value row, Value col) {
    SmallVector<Value> all = {row, col};
    if (shape.size() == 3)
      all.insert(all.begin(), batchIndex);
    return all;
  };
  // Rows ty + 8 i of the tile, each thread one column: along the stored
  // rows in both passes.
  for (int64_t i = 0; i < kTile / kRowsPerPass; ++i) {
    Value r = b.create<arith::AddIOp>(ty, index(i * kRowsPerPass));
    Value row = b.create<arith::AddIOp>(rowBase, r);
    Value col = b.create<arith::AddIOp>(colBase, tx);
    guarded(row, col, rows, cols, [&] {
      Value v = b.create<memref::LoadOp>(matrix, indices(row, col));
      b.create<memref::StoreOp>(v, tile, ValueRange{r, tx});
    });
  }
  b.create<gpu::BarrierOp>();
  for (int64_t i = 0; i < kTile / kRowsPerPass; ++i) {
    Value c = b.create<arith::AddIOp>(ty, index(i * kRowsPerPass));
    Value col = b.create<arith::AddIOp>(colBase, c);
    Value row = b.create<arith::AddIOp>(rowBase, tx);
    guarded(col, row, cols, rows, [&] {
      Value v = b.create<memref::LoadOp>(tile, ValueRange{tx, c});
      b.create<memref::StoreOp>(v, scratch, indices(col, row));
    });
  }
  return scratch;
}

void WgmmaKernelBuilder::build() {
  MLIRContext *ctx = b.getContext();
  // TF32: wgmma transposes only 16-bit tiles in shared memory, so an f32
  // operand stored K x M or K x N is first transposed by a kernel of its
  // own into a scratch buffer (about 8% of a 4096^3 GEMM's time, against
  // copying each element transposed into the tiles, which halved its
  // speed). Weights that do not change would be transposed once; here
  // every call pays.
  aMatrix = mm.a;
  bMatrix = asMatrix(mm.b);
  if (mm.element.isF32() && mm.transposedA) {
    aMatrix = transposeToScratch(aMatrix);
    mm.transposedA = false;
  }
  if (mm.element.isF32() && !mm.transposedB) {
    bMatrix = transposeToScratch(bMatrix);
    mm.transposedB = true;
  }
  // The partial sums of a split K live in a buffer of the host function
  // (a scratch buffer the runners allocate, ke/Codegen/GpuKernel.h).
  if (mm.splitK > 1)
    partials = b.create<memref::AllocOp>(
        MemRefType::get({mm.splitK, mm.m, mm.n}, b.getF32Type()));
  if (mm.tma)
    makeTensorMaps();
  auto launch = b.create<gpu::LaunchOp>(
      index(mm.tileCols()), index(mm.tileRows()),
      index(mm.splitK > 1 ? mm.splitK : mm.batch),
      index(mm.threads()), index(1), index(1),
      b.create<arith::ConstantIntOp>(b.getI32Type(), mm.sharedBytes()));
  beginBlockTile(launch, mm.blockM, mm.blockN, mm.groupM);
  splitId = batchId;
  warpgroup = b.create<arith::DivUIOp>(thread, index(kWarpgroupThreads));

  // The tiles start at the first 1024-byte boundary: the swizzle is a
  // function of address bits 4-9, and the descriptors assume it.
  auto workgroup = gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
  Value dynamic = b.create<gpu::DynamicSharedMemoryOp>(MemRefType::get(
      {ShapedType::kDynamic}, b.getI8Type(), AffineMap(), workgroup));
  Value address = b.create<memref::ExtractAlignedPointerAsIndexOp>(dynamic);
  Value pad = b.create<arith::RemUIOp>(
      b.create<arith::SubIOp>(
          index(kSwizzleAtomBytes),
          b.create<arith::RemUIOp>(address, index(kSwizzleAtomBytes))),
      index(kSwizzleAtomBytes));
  sharedBase = b.create<arith::IndexCastUIOp>(
      b.getI64Type(), b.create<arith::AddIOp>(address, pad));
  int64_t rowElements = kSwizzleRowBytes / mm.elementBytes();
  SmallVector<int64_t> aShape =
      mm.transposedA
          ? SmallVector<int64_t>{mm.stages, mm.blockM / rowElements,
                                 mm.kTile(), rowElements}
          : SmallVector<int64_t>{mm.stages, mm.blockM, rowElements};
  auto aType = MemRefType::get(aShape, mm.element, AffineMap(), workgroup);
  SmallVector<int64_t> bShape =
      mm.transposedB
          ? SmallVector<int64_t>{mm.stages, mm.blockN, rowElements}
          : SmallVector<int64_t>{mm.stages, mm.blockN / rowElements, mm.kTile(),
                                 rowElements};
  auto bType = MemRefType::get(bShape, mm.element, AffineMap(), workgroup);
  aTiles = b.create<memref::ViewOp>(aType, dynamic, pad, ValueRange{});
  bTiles = b.create<memref::ViewOp>(
      bType, dynamic,
      b.create<arith::AddIOp>(pad, index(mm.stages * mm.aStageBytes())),
      ValueRange{});


  // Prologue: tiles 0 .. stages - 3, a group each. With split_k, tile t of
  // this block's part is the operands' tile split * kTiles + t.
  int64_t kTiles = mm.kTiles() / mm.splitK;
  // With tma = 2 every stage is filled first; then stage (k - 1) % stages
  // takes tile k - 1 + stages once all warpgroups released it.
  int64_t ahead = std::min(mm.tma == 2 ? mm.stages : mm.stages - 2, kTiles);
  Value firstTile = mm.splitK > 1
                        ? b.create<arith::MulIOp>(splitId, index(kTiles))
                              .getResult()
                        : index(0);
  auto global = [&](Value tile) {
    return mm.splitK > 1 ? b.create<arith::AddIOp>(firstTile, tile).getResult()
                         : tile;
  };
  // With TMA, thread 0 sets up the stages' mbarriers (one arrival each:
  // its own, with the bytes to expect) and issues every bulk copy.
  Value leader;
  if (mm.tma) {
    leader = b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, thread,
                                     index(0));
    auto init = b.create<scf::IfOp>(leader, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(init.thenBlock());
      for (int64_t s = 0; s < mm.stages; ++s) {
        b.create<NVVM::MBarrierInitOp>(
            stageBarrier(index(s)),
            b.create<arith::ConstantIntOp>(b.getI32Type(), 1), Value());
        // One arrival per warpgroup.
        if (mm.tma == 2)
          b.create<NVVM::MBarrierInitOp>(
              releaseBarrier(index(s)),
              b.create<arith::ConstantIntOp>(b.getI32Type(), mm.warpgroups()),
              Value());
      }
      // The initialized barriers, visible to the async proxy.
      b.create<NVVM::FenceMbarrierInitOp>();
      for (int64_t t = 0; t < ahead; ++t)
        loadTiles(global(index(t)), index(t));
    }
    b.create<gpu::BarrierOp>();
  } else {
    for (int64_t t = 0; t < ahead; ++t) {
      copyTiles(global(index(t)), index(t));
      b.create<NVVM::CpAsyncCommitGroupOp>();
    }
  }
  accType = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(mm.blockN / 2, b.getF32Type()));
  Value zero = b.create<LLVM::ZeroOp>(accType);
  auto loop = b.create<scf::ForOp>(index(0), index(kTiles), index(1),
                                   ValueRange{zero});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kTile = loop.getInductionVar();
    Value acc = loop.getRegionIterArgs()[0];
    // Tile k has landed for this thread; the fence makes its (generic
    // proxy) writes visible to wgmma (async proxy), the barrier everyone's.
    Value stage = b.create<arith::RemUIOp>(kTile, index(mm.stages));
    if (mm.tma) {
      // Tile k's bytes have landed once its stage's barrier completes its
      // (k / stages)-th phase; TMA writes through the async proxy, which
      // wgmma reads, so no proxy fence. The block barrier tells thread 0
      // that every warpgroup finished tile k - 2 (below).
      waitParity(stageBarrier(stage),
                 b.create<arith::AndIOp>(
                     b.create<arith::DivUIOp>(kTile, index(mm.stages)),
                     index(1)));
    } else {
      b.create<NVVM::CpAsyncWaitGroupOp>(ahead - 1);
      b.create<NVVM::FenceProxyOp>(
          NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    }
    if (mm.tma == 2) {
      acc = multiply(stage, acc);
      b.create<NVVM::WgmmaWaitGroupSyncOp>(1);
      releaseAndRefill(kTile, kTiles, leader, global);
    } else {
      b.create<gpu::BarrierOp>();
      acc = multiply(stage, acc);
      // Tile k + stages - 2 goes where tile k - 2 was: every warpgroup waited
      // for its wgmma group k - 2 before this iteration's barrier.
      Value next = b.create<arith::AddIOp>(kTile, index(ahead));
      Value inRange = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, next,
                                              index(kTiles));
      if (mm.tma)
        inRange = b.create<arith::AndIOp>(inRange, leader);
      auto ifOp = b.create<scf::IfOp>(inRange, /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        Value nextStage = b.create<arith::RemUIOp>(next, index(mm.stages));
        if (mm.tma)
          loadTiles(global(next), nextStage);
        else
          copyTiles(global(next), nextStage);
      }
      // A group every iteration, empty at the end, so that the wait above
      // always counts the same.
      if (!mm.tma)
        b.create<NVVM::CpAsyncCommitGroupOp>();
      b.create<NVVM::WgmmaWaitGroupSyncOp>(1);
    }
    b.create<scf::YieldOp>(acc);
  }
  b.create<NVVM::WgmmaWaitGroupSyncOp>(0);
  storeAccumulators(loop.getResult(0));
  if (mm.splitK > 1) {
    b.setInsertionPointAfter(launch);
    buildSplitReduction();
  }
  eraseMarkedOps();
}

struct GpuWgmmaMatmulsPass final
    : ke::impl::GpuWgmmaMatmulsPassBase<GpuWgmmaMatmulsPass> {
  void runOnOperation() override {
    for (linalg::LinalgOp op : collectMarkedOps(getOperation(), kWgmmaAttr)) {
      FailureOr<WgmmaMatmul> mm = analyzeWgmmaMatmul(op);
      if (failed(mm))
        return signalPassFailure();
      WgmmaKernelBuilder(*mm).build();
    }
  }
};

} // namespace

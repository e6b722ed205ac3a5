//===- GpuMfmaMatmuls.cpp - CDNA matmul kernels on MFMA -------------------===//
//
// ke-gpu-mfma-matmuls (ke/Codegen/Passes.td), the first step of the ROCm
// lowering. The gpu.mfma sketch (lib/Sketch/GpuMfmaRule.cpp) bufferizes a
// 16-bit matmul, batch matmul or channels-last convolution and marks it
// with its knobs (`ke.mfma = {block_m, block_n, waves_m, waves_n, k_tile,
// group_m}`); here it becomes one kernel:
//
//   grid (N / block_n, M / block_m rounded up, batch), block ids mapped so
//     that group_m tile rows sweep the columns together; waves_m x waves_n
//     wavefronts of 64 lanes, each computing a (block_m / waves_m) x
//     (block_n / waves_n) tile as 16x16 tiles of f32 accumulators;
//   LDS: one A tile and one B tile of k_tile K, each stored as the operand
//     is (rows along its outer extent, 16-byte chunks along the contiguous
//     one), rows padded by 16 bytes so that a fragment's lanes spread over
//     the banks;
//   k loop: barrier, the stage held in registers stored to LDS, barrier,
//     the next stage's 16-byte global loads issued into registers (they
//     land while this stage multiplies), then per 16 K and 16x16 tile one
//     amdgpu.mfma 16x16x16 (v_mfma_f32_16x16x16f16 or _bf16_1k);
//   epilogue: each lane's accumulators stored with the fill's value added
//     and the fused consumer (`ke.mfma.epilogue`) applied.
//
// The operand layout of 16x16x16 MFMA with 16-bit inputs (AMD's CDNA ISA
// guides; the same table as IREE's MFMA_F32_16x16x16_F16 layout): lane l
// holds A[l % 16][4 (l / 16) + i], B[4 (l / 16) + i][l % 16] and the result
// D[4 (l / 16) + i][l % 16], i = 0..3. A fragment is one 8-byte LDS read
// where the operand's K is contiguous, four 2-byte reads where it is not.
//
// Partial tiles: chunks past M, N or K are loaded as zeros (their index
// clamped to 0, so the load stays inside the operand), elements past M or
// N not stored.
//
//===----------------------------------------------------------------------===//

#include "GpuGemmKernel.h"

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace ke;

namespace ke {
#define GEN_PASS_DEF_GPUMFMAMATMULSPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

constexpr llvm::StringLiteral kMfmaAttr = "ke.mfma";
constexpr llvm::StringLiteral kMfmaEpilogueAttr = "ke.mfma.epilogue";
/// The instruction's M, N and K; lanes of a wavefront; the lanes' K groups
/// hold 4 consecutive K each.
constexpr int64_t kInstr = 16, kWaveSize = 64, kLaneK = 4;
/// Elements of one 16-byte global load, and the LDS row padding.
constexpr int64_t kVector = 8, kPad = 8;

/// What the kernel is built from: the marked GEMM and the knobs.
struct MfmaMatmul : MarkedGemm {
  int64_t blockM = 0, blockN = 0, wavesM = 0, wavesN = 0, kTile = 0;
  int64_t groupM = 1;
  int64_t threads() const { return wavesM * wavesN * kWaveSize; }
  int64_t waveM() const { return blockM / wavesM; }
  int64_t waveN() const { return blockN / wavesN; }
  int64_t tileRows() const { return llvm::divideCeil(m, blockM); }
  int64_t tileCols() const { return llvm::divideCeil(n, blockN); }
  int64_t kTiles() const { return llvm::divideCeil(k, kTile); }
};

/// The op gpu.mfma's script marked, as the kernel needs it; a located error
/// when the kernel cannot be built from it (the sketch checks the same).
FailureOr<MfmaMatmul> analyzeMfmaMatmul(linalg::LinalgOp op) {
  auto knobs = op->getAttrOfType<DictionaryAttr>(kMfmaAttr);
  if (!knobs)
    return op->emitError("ke.mfma must be a dictionary");
  MfmaMatmul mm;
  int64_t *fields[] = {&mm.blockM, &mm.blockN, &mm.wavesM, &mm.wavesN,
                       &mm.kTile};
  StringRef names[] = {"block_m", "block_n", "waves_m", "waves_n", "k_tile"};
  for (auto [field, name] : llvm::zip(fields, names)) {
    FailureOr<int64_t> value = readIntegerKnob(op, knobs, kMfmaAttr, name);
    if (failed(value))
      return failure();
    *field = *value;
  }
  if (auto group = knobs.getAs<IntegerAttr>("group_m"))
    mm.groupM = group.getInt();
  FailureOr<MarkedGemm> gemm = analyzeMarkedGemm(op, kMfmaAttr,
                                                 kMfmaEpilogueAttr);
  if (failed(gemm))
    return failure();
  int64_t blockM = mm.blockM, blockN = mm.blockN, wavesM = mm.wavesM,
          wavesN = mm.wavesN, kTile = mm.kTile, groupM = mm.groupM;
  static_cast<MarkedGemm &>(mm) = *gemm;
  if (!mm.element.isF16() && !mm.element.isBF16())
    return op->emitError("ke.mfma takes f16 or bf16 operands");
  // Each operand is loaded 16 bytes at a time along its contiguous extent
  // (A's K, or M when stored K x M; B's N, or K when stored N x K); a
  // convolution's chunk of channels must stay in one filter tap.
  if ((mm.transposedA ? mm.m : mm.k) % kVector ||
      (mm.transposedB ? mm.k : mm.n) % kVector ||
      (mm.conv && mm.conv->channels % kVector))
    return op->emitError("ke.mfma: the rows of A and B (and a "
                         "convolution's channels) must be multiples of ")
           << kVector << " elements, not " << mm.m << "x" << mm.n << "x"
           << mm.k;
  if (wavesM < 1 || wavesN < 1 || wavesM * wavesN > 16 ||
      blockM % (wavesM * kInstr) || blockN % (wavesN * kInstr) ||
      kTile % kInstr || kTile < kInstr || groupM < 1)
    return op->emitError("ke.mfma: block ")
           << blockM << "x" << blockN << " on " << wavesM << "x" << wavesN
           << " waves with K tiles of " << kTile
           << " does not split into 16x16x16 MFMAs (at most 16 waves, "
              "group_m positive)";
  mm.blockM = blockM;
  mm.blockN = blockN;
  mm.wavesM = wavesM;
  mm.wavesN = wavesN;
  mm.kTile = kTile;
  mm.groupM = groupM;
  if (mm.tileRows() > 65535)
    return op->emitError("ke.mfma: ")
           << mm.tileRows() << " tile rows exceed the grid's y (65535)";
  return mm;
}

/// One operand's stage: `rows` x `cols` elements of the operand (cols its
/// contiguous extent) from (rowBase, colBase), kept in an LDS tile of the
/// same shape with padded rows.
struct StageCopy {
  Value source, tile;
  int64_t rows, cols, rowExtent, colExtent;
  /// Whether rowBase (else colBase) moves with the K tile.
  bool kRows;
  Value fixedBase;
  /// A convolution's A: rows are output pixels, columns filter taps'
  /// channels.
  bool implicitConv;
  int64_t chunks() const { return rows * cols / kVector; }
};

/// Builds the kernel of one marked matmul in place of it and its fill.
class MfmaKernelBuilder : GemmKernelBuilder {
public:
  MfmaKernelBuilder(MfmaMatmul matmul, bool emulate)
      : GemmKernelBuilder(matmul), mm(matmul), emulate(emulate) {}

  void build();

private:
  /// The 16-byte chunks of `copy` this thread loads for K tile `kTile`,
  /// zeros outside the operand.
  SmallVector<Value> loadStage(const StageCopy &copy, Value kTile);
  /// Stores what loadStage loaded into the LDS tile.
  void storeStage(const StageCopy &copy, ValueRange chunks);
  /// Chunk `i` of this thread: its id, row and column in the tile, and
  /// whether the id is inside the tile (null: always).
  struct Chunk {
    Value row, column, inTile;
  };
  Chunk chunkOf(const StageCopy &copy, int64_t i);
  /// A lane's four K elements of an operand's fragment: row or column
  /// `outer` of the LDS tile, K from `k`.
  Value fragment(Value tile, bool kContiguous, Value outer, Value k);
  /// One stage's MFMAs on the LDS tiles; returns the new accumulators.
  SmallVector<Value> multiply(ValueRange acc);
  /// acc + a * b for one 16x16x16 tile: amdgpu.mfma, or emulated.
  Value mfma(Value a, Value b, Value acc);
  /// The same computed by the lanes: each stores its A and B fragments in
  /// the wave's part of `exchange`, and after a barrier sums its four
  /// results D[4 (l / 16) + i][l % 16] over K from the other lanes' parts.
  Value emulateMfma(Value a, Value b, Value acc);
  void storeAccumulators(ValueRange acc);

  MfmaMatmul mm;
  bool emulate;
  Value wave, lane, waveRow, waveCol, laneRow, laneK;
  /// With `emulate`: each wave's lanes' operand fragments (A's four
  /// elements, then B's).
  Value exchange;
  StageCopy aCopy, bCopy;
};

MfmaKernelBuilder::Chunk MfmaKernelBuilder::chunkOf(const StageCopy &copy,
                                                    int64_t i) {
  Value id = b.create<arith::AddIOp>(thread, index(i * mm.threads()));
  Chunk c;
  if (copy.chunks() % mm.threads() &&
      (i + 1) * mm.threads() > copy.chunks()) {
    c.inTile = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, id,
                                       index(copy.chunks()));
    id = b.create<arith::SelectOp>(c.inTile, id, index(0));
  }
  int64_t chunksPerRow = copy.cols / kVector;
  c.row = b.create<arith::DivUIOp>(id, index(chunksPerRow));
  c.column = b.create<arith::MulIOp>(
      b.create<arith::RemUIOp>(id, index(chunksPerRow)), index(kVector));
  return c;
}

SmallVector<Value> MfmaKernelBuilder::loadStage(const StageCopy &copy,
                                                Value kTile) {
  Value kBase = b.create<arith::MulIOp>(kTile, index(mm.kTile));
  Value rowBase = copy.kRows ? kBase : copy.fixedBase;
  Value colBase = copy.kRows ? copy.fixedBase : kBase;
  auto vectorType = VectorType::get({kVector}, mm.element);
  Value zeros = b.create<arith::ConstantOp>(
      vectorType, DenseElementsAttr::get(
                      vectorType, b.getZeroAttr(mm.element)));
  SmallVector<Value> loaded;
  for (int64_t i = 0; i < llvm::divideCeil(copy.chunks(), mm.threads());
       ++i) {
    Chunk c = chunkOf(copy, i);
    Value srcRow = b.create<arith::AddIOp>(rowBase, c.row);
    Value srcCol = b.create<arith::AddIOp>(colBase, c.column);
    // A chunk lies wholly inside or outside (the contiguous extent is a
    // multiple of the chunk).
    Value valid = c.inTile;
    auto within = [&](Value value, int64_t extent, int64_t tile) {
      // Every tile whole along this extent: nothing to check.
      if (extent % tile == 0)
        return;
      Value inside = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, value,
                                             index(extent));
      valid = valid ? b.create<arith::AndIOp>(valid, inside).getResult()
                    : inside;
    };
    within(srcRow, copy.rowExtent, copy.rows);
    within(srcCol, copy.colExtent, copy.cols);
    if (valid) {
      srcRow = b.create<arith::SelectOp>(valid, srcRow, index(0));
      srcCol = b.create<arith::SelectOp>(valid, srcCol, index(0));
    }
    SmallVector<Value> indices =
        copy.implicitConv ? convInputIndices(srcRow, srcCol)
                          : SmallVector<Value>{srcRow, srcCol};
    if (mm.batched)
      indices.insert(indices.begin(), batchId);
    auto load = b.create<vector::LoadOp>(vectorType, copy.source, indices);
    // Rows of 16-byte multiples, chunks at multiples of 16 bytes.
    load.setAlignment(uint64_t(16));
    Value v = load;
    if (valid)
      v = b.create<arith::SelectOp>(valid, v, zeros);
    loaded.push_back(v);
  }
  return loaded;
}

void MfmaKernelBuilder::storeStage(const StageCopy &copy, ValueRange chunks) {
  for (auto [i, chunk] : llvm::enumerate(chunks)) {
    Chunk c = chunkOf(copy, i);
    scf::IfOp guard;
    if (c.inTile) {
      guard = b.create<scf::IfOp>(c.inTile, /*withElseRegion=*/false);
      b.setInsertionPointToStart(guard.thenBlock());
    }
    auto store =
        b.create<vector::StoreOp>(chunk, copy.tile, ValueRange{c.row, c.column});
    // Rows of padded 16-byte multiples: every chunk is 16-byte aligned.
    store.setAlignment(uint64_t(16));
    if (guard)
      b.setInsertionPointAfter(guard);
  }
}

Value MfmaKernelBuilder::fragment(Value tile, bool kContiguous, Value outer,
                                  Value k) {
  auto type = VectorType::get({kLaneK}, mm.element);
  if (kContiguous) {
    auto load = b.create<vector::LoadOp>(type, tile, ValueRange{outer, k});
    load.setAlignment(uint64_t(kLaneK * mm.elementBytes()));
    return load;
  }
  SmallVector<Value> elements;
  for (int64_t i = 0; i < kLaneK; ++i)
    elements.push_back(b.create<memref::LoadOp>(
        tile, ValueRange{b.create<arith::AddIOp>(k, index(i)), outer}));
  return b.create<vector::FromElementsOp>(type, elements);
}

SmallVector<Value> MfmaKernelBuilder::multiply(ValueRange acc) {
  int64_t tilesM = mm.waveM() / kInstr, tilesN = mm.waveN() / kInstr;
  Value rowBase = b.create<arith::AddIOp>(
      b.create<arith::MulIOp>(waveRow, index(mm.waveM())), laneRow);
  Value colBase = b.create<arith::AddIOp>(
      b.create<arith::MulIOp>(waveCol, index(mm.waveN())), laneRow);
  SmallVector<Value> result(acc.begin(), acc.end());
  for (int64_t step = 0; step < mm.kTile / kInstr; ++step) {
    Value k = b.create<arith::AddIOp>(laneK, index(step * kInstr));
    SmallVector<Value> aFrags, bFrags;
    for (int64_t tm = 0; tm < tilesM; ++tm)
      aFrags.push_back(fragment(
          aCopy.tile, !mm.transposedA,
          b.create<arith::AddIOp>(rowBase, index(tm * kInstr)), k));
    for (int64_t tn = 0; tn < tilesN; ++tn)
      bFrags.push_back(fragment(
          bCopy.tile, mm.transposedB,
          b.create<arith::AddIOp>(colBase, index(tn * kInstr)), k));
    for (int64_t tm = 0; tm < tilesM; ++tm)
      for (int64_t tn = 0; tn < tilesN; ++tn) {
        Value &c = result[tm * tilesN + tn];
        c = mfma(aFrags[tm], bFrags[tn], c);
      }
  }
  return result;
}

Value MfmaKernelBuilder::mfma(Value a, Value bFrag, Value acc) {
  if (emulate)
    return emulateMfma(a, bFrag, acc);
  return b.create<amdgpu::MFMAOp>(acc.getType(), kInstr, kInstr, kInstr,
                                  /*blocks=*/1, a, bFrag, acc);
}

Value MfmaKernelBuilder::emulateMfma(Value a, Value bFrag, Value acc) {
  b.create<vector::StoreOp>(a, exchange, ValueRange{wave, lane, index(0)});
  b.create<vector::StoreOp>(bFrag, exchange,
                            ValueRange{wave, lane, index(kLaneK)});
  b.create<gpu::BarrierOp>();
  // A[r][k] is element k % 4 of lane r + 16 (k / 4); B[k][c] element
  // 4 + k % 4 of lane c + 16 (k / 4).
  SmallVector<Value> sums;
  for (int64_t i = 0; i < kLaneK; ++i)
    sums.push_back(b.create<vector::ExtractOp>(acc, ArrayRef<int64_t>{i}));
  auto loop = b.create<scf::ForOp>(index(0), index(kInstr), index(1), sums);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k = loop.getInductionVar();
    Value group = b.create<arith::MulIOp>(
        b.create<arith::DivUIOp>(k, index(kLaneK)), index(kInstr));
    Value element = b.create<arith::RemUIOp>(k, index(kLaneK));
    Value bValue = b.create<memref::LoadOp>(
        exchange,
        ValueRange{wave, b.create<arith::AddIOp>(laneRow, group),
                   b.create<arith::AddIOp>(element, index(kLaneK))});
    Value bF32 = b.create<arith::ExtFOp>(b.getF32Type(), bValue);
    SmallVector<Value> next;
    for (int64_t i = 0; i < kLaneK; ++i) {
      Value row = b.create<arith::AddIOp>(laneK, index(i));
      Value aValue = b.create<memref::LoadOp>(
          exchange,
          ValueRange{wave, b.create<arith::AddIOp>(row, group), element});
      Value aF32 = b.create<arith::ExtFOp>(b.getF32Type(), aValue);
      next.push_back(b.create<math::FmaOp>(aF32, bF32,
                                           loop.getRegionIterArgs()[i]));
    }
    b.create<scf::YieldOp>(next);
  }
  // Every lane has read the wave's fragments before they are overwritten.
  b.create<gpu::BarrierOp>();
  return b.create<vector::FromElementsOp>(acc.getType(), loop.getResults());
}

void MfmaKernelBuilder::storeAccumulators(ValueRange acc) {
  int64_t tilesN = mm.waveN() / kInstr;
  Value result = resultMatrix();
  // Lane l holds rows 4 (l / 16) + i, column l % 16 of each 16x16 tile.
  Value rowBase = b.create<arith::AddIOp>(
      b.create<arith::AddIOp>(
          mBase, b.create<arith::MulIOp>(waveRow, index(mm.waveM()))),
      laneK);
  Value colBase = b.create<arith::AddIOp>(
      b.create<arith::AddIOp>(
          nBase, b.create<arith::MulIOp>(waveCol, index(mm.waveN()))),
      laneRow);
  for (auto [t, tile] : llvm::enumerate(acc)) {
    int64_t tm = t / tilesN, tn = t % tilesN;
    Value col = b.create<arith::AddIOp>(colBase, index(tn * kInstr));
    for (int64_t i = 0; i < kLaneK; ++i) {
      Value row = b.create<arith::AddIOp>(rowBase, index(tm * kInstr + i));
      // A partial tile's elements outside the result are not stored.
      Value inside = insideResult(row, col, mm.blockM, mm.blockN);
      scf::IfOp guard;
      if (inside) {
        guard = b.create<scf::IfOp>(inside, /*withElseRegion=*/false);
        b.setInsertionPointToStart(guard.thenBlock());
      }
      Value sum = b.create<vector::ExtractOp>(tile, ArrayRef<int64_t>{i});
      SmallVector<Value> indices = {row, col};
      if (mm.batched)
        indices.insert(indices.begin(), batchId);
      b.create<memref::StoreOp>(finish(sum, row, col), result, indices);
      if (guard)
        b.setInsertionPointAfter(guard);
    }
  }
}

void MfmaKernelBuilder::build() {
  MLIRContext *ctx = b.getContext();
  auto launch = b.create<gpu::LaunchOp>(
      index(mm.tileCols()), index(mm.tileRows()), index(mm.batch),
      index(mm.threads()), index(1), index(1));
  beginBlockTile(launch, mm.blockM, mm.blockN, mm.groupM);
  wave = b.create<arith::DivUIOp>(thread, index(kWaveSize));
  lane = b.create<arith::RemUIOp>(thread, index(kWaveSize));
  waveRow = b.create<arith::DivUIOp>(wave, index(mm.wavesN));
  waveCol = b.create<arith::RemUIOp>(wave, index(mm.wavesN));
  laneRow = b.create<arith::RemUIOp>(lane, index(kInstr));
  laneK = b.create<arith::MulIOp>(b.create<arith::DivUIOp>(lane, index(kInstr)),
                                  index(kLaneK));

  // The LDS tiles, laid out as the operands are stored.
  auto workgroup = gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
  auto tile = [&](int64_t rows, int64_t cols) {
    return b.create<memref::AllocOp>(MemRefType::get(
        {rows, cols + kPad}, mm.element, AffineMap(), workgroup));
  };
  if (emulate)
    exchange = b.create<memref::AllocOp>(
        MemRefType::get({mm.wavesM * mm.wavesN, kWaveSize, 2 * kLaneK},
                        mm.element, AffineMap(), workgroup));
  // A: M x K (or K x M); B: N x K (or K x N).
  if (mm.transposedA)
    aCopy = {mm.a, tile(mm.kTile, mm.blockM), mm.kTile, mm.blockM, mm.k,
             mm.m, /*kRows=*/true, mBase, false};
  else
    aCopy = {mm.a, tile(mm.blockM, mm.kTile), mm.blockM, mm.kTile, mm.m,
             mm.k, /*kRows=*/false, mBase, mm.conv.has_value()};
  Value bMatrix = asMatrix(mm.b);
  if (mm.transposedB)
    bCopy = {bMatrix, tile(mm.blockN, mm.kTile), mm.blockN, mm.kTile, mm.n,
             mm.k, /*kRows=*/false, nBase, false};
  else
    bCopy = {bMatrix, tile(mm.kTile, mm.blockN), mm.kTile, mm.blockN, mm.k,
             mm.n, /*kRows=*/true, nBase, false};

  // The loop carries the stage loaded ahead (A's chunks, then B's) and the
  // accumulators.
  SmallVector<Value> init = loadStage(aCopy, index(0));
  size_t aChunks = init.size();
  llvm::append_range(init, loadStage(bCopy, index(0)));
  size_t stageValues = init.size();
  auto accType = VectorType::get({kLaneK}, b.getF32Type());
  Value zero = b.create<arith::ConstantOp>(
      accType, DenseElementsAttr::get(accType, b.getF32FloatAttr(0)));
  init.append((mm.waveM() / kInstr) * (mm.waveN() / kInstr), zero);
  auto loop =
      b.create<scf::ForOp>(index(0), index(mm.kTiles()), index(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    ValueRange carried = loop.getRegionIterArgs();
    // Every wave is done reading the last stage before it is overwritten.
    b.create<gpu::BarrierOp>();
    storeStage(aCopy, carried.take_front(aChunks));
    storeStage(bCopy, carried.slice(aChunks, stageValues - aChunks));
    b.create<gpu::BarrierOp>();
    // The next stage's loads (the last tile again at the end: always in
    // bounds, never stored) land while this one multiplies.
    Value next = b.create<arith::MinUIOp>(
        b.create<arith::AddIOp>(loop.getInductionVar(), index(1)),
        index(mm.kTiles() - 1));
    SmallVector<Value> yielded = loadStage(aCopy, next);
    llvm::append_range(yielded, loadStage(bCopy, next));
    llvm::append_range(yielded, multiply(carried.drop_front(stageValues)));
    b.create<scf::YieldOp>(yielded);
  }
  storeAccumulators(loop.getResults().drop_front(stageValues));
  eraseMarkedOps();
}

struct GpuMfmaMatmulsPass final
    : ke::impl::GpuMfmaMatmulsPassBase<GpuMfmaMatmulsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (linalg::LinalgOp op : collectMarkedOps(getOperation(), kMfmaAttr)) {
      FailureOr<MfmaMatmul> mm = analyzeMfmaMatmul(op);
      if (failed(mm))
        return signalPassFailure();
      MfmaKernelBuilder(*mm, emulate).build();
    }
  }
};

} // namespace

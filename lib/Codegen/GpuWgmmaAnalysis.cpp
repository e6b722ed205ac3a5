//===- GpuWgmmaAnalysis.cpp - What a wgmma kernel is built from ----------===//
//
// analyzeWgmmaMatmul (GpuWgmma.h): reads a matmul, batch matmul or
// channels-last convolution that gpu.wgmma's script marked, with the fill
// before it and the consumer marked as its epilogue, checks that
// ke-gpu-wgmma-matmuls can build its kernel (the sketch checks the same;
// a hand-written mark gets located errors) and collects what the builder
// needs. Also the descriptors' constant fields.
//
//===----------------------------------------------------------------------===//

#include "GpuWgmma.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace ke;

namespace {

/// Reads an integer field of the knob dictionary.
FailureOr<int64_t> readKnob(Operation *op, DictionaryAttr knobs,
                            StringRef name) {
  auto value = knobs.getAs<IntegerAttr>(name);
  if (!value)
    return op->emitError("ke.wgmma: missing integer '") << name << "'";
  return value.getInt();
}

/// Finds the consumer marked as the matmul's epilogue, if any, and checks
/// that the kernel can apply it per accumulator: all loops parallel, one
/// result written through the identity, the matmul's result read through
/// the identity and nowhere else (a temporary buffer).
LogicalResult analyzeEpilogue(WgmmaMatmul &mm) {
  for (Operation *next = mm.op->getNextNode(); next;
       next = next->getNextNode()) {
    auto consumer = dyn_cast<linalg::LinalgOp>(next);
    if (!consumer || !consumer->hasAttr(kEpilogueAttr))
      continue;
    if (consumer.getNumParallelLoops() != consumer.getNumLoops() ||
        consumer.getNumLoops() != (mm.conv ? 4u : mm.batched ? 3u : 2u) ||
        consumer.getNumDpsInits() != 1 || !consumer.hasPureBufferSemantics() ||
        !consumer.getMatchingIndexingMap(consumer.getDpsInitOperand(0))
             .isIdentity())
      return consumer->emitError("ke.wgmma.epilogue: not an elementwise op "
                                 "over the matmul's result");
    bool readsResult = false;
    for (OpOperand *input : consumer.getDpsInputOperands()) {
      if (input->get() != mm.c)
        continue;
      if (!consumer.getMatchingIndexingMap(input).isIdentity())
        return consumer->emitError("ke.wgmma.epilogue reads the matmul's "
                                   "result through a permutation");
      readsResult = true;
    }
    auto alloc = mm.c.getDefiningOp<memref::AllocOp>();
    if (!readsResult || !alloc)
      return consumer->emitError("ke.wgmma.epilogue must read the matmul's "
                                 "result from a temporary buffer");
    for (Operation *user : alloc->getUsers())
      if (user != mm.op && user != consumer && user != mm.op->getPrevNode() &&
          !isa<memref::DeallocOp>(user))
        return user->emitError("ke.wgmma.epilogue: the matmul's result is "
                               "used here too");
    mm.epilogue = consumer;
    return success();
  }
  return success();
}

FailureOr<WgmmaMatmul> finishAnalysis(WgmmaMatmul &mm);

/// A marked channels-last convolution as an implicit GEMM.
FailureOr<WgmmaMatmul> analyzeConv(WgmmaMatmul &mm,
                                   linalg::Conv2DNhwcHwcfOp conv) {
  mm.a = conv.getInputs()[0];
  mm.b = conv.getInputs()[1];
  mm.c = conv.getOutputs()[0];
  for (Value v : {mm.a, mm.b, mm.c}) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
      return conv->emitError("ke.wgmma needs static, contiguous operands");
  }
  ArrayRef<int64_t> filter = cast<MemRefType>(mm.b.getType()).getShape();
  ArrayRef<int64_t> output = cast<MemRefType>(mm.c.getType()).getShape();
  ConvGeometry g;
  g.outH = output[1];
  g.outW = output[2];
  g.filterH = filter[0];
  g.filterW = filter[1];
  g.channels = filter[2];
  auto strides = llvm::to_vector(conv.getStrides().getValues<int64_t>());
  auto dilations = llvm::to_vector(conv.getDilations().getValues<int64_t>());
  g.strideH = strides[0];
  g.strideW = strides[1];
  g.dilationH = dilations[0];
  g.dilationW = dilations[1];
  mm.conv = g;
  mm.m = output[0] * g.outH * g.outW;
  mm.n = filter[3];
  mm.k = g.filterH * g.filterW * g.channels;
  // B, the filter as (kh kw c) x f, is stored K x N.
  mm.transposedB = false;
  // A K tile must be one filter tap's channels.
  mm.element = getElementTypeOrSelf(mm.a.getType());
  if (mm.element.isIntOrFloat() && g.channels % mm.kTile())
    return conv->emitError("ke.wgmma: a convolution's channels must be a "
                           "multiple of ")
           << mm.kTile();
  return finishAnalysis(mm);
}

} // namespace

FailureOr<WgmmaMatmul> ke::analyzeWgmmaMatmul(linalg::LinalgOp op) {
  WgmmaMatmul mm;
  mm.op = op;
  auto knobs = op->getAttrOfType<DictionaryAttr>(kWgmmaAttr);
  if (!knobs)
    return op->emitError("ke.wgmma must be a dictionary");
  FailureOr<int64_t> blockM = readKnob(op, knobs, "block_m"),
                     blockN = readKnob(op, knobs, "block_n"),
                     stages = readKnob(op, knobs, "stages");
  if (failed(blockM) || failed(blockN) || failed(stages))
    return failure();
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
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNhwcHwcfOp>(
          op) ||
      !op.hasPureBufferSemantics())
    return op->emitError("ke.wgmma takes a bufferized linalg.matmul, "
                         "linalg.batch_matmul or linalg.conv_2d_nhwc_hwcf");
  if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation()))
    return analyzeConv(mm, conv);
  mm.batched = isa<linalg::BatchMatmulOp>(op);
  unsigned lead = mm.batched ? 1 : 0, rank = lead + 3;
  MLIRContext *ctx = op.getContext();
  auto map = [&](ArrayRef<unsigned> dims) {
    SmallVector<AffineExpr> exprs;
    if (mm.batched)
      exprs.push_back(getAffineDimExpr(0, ctx));
    for (unsigned d : dims)
      exprs.push_back(getAffineDimExpr(lead + d, ctx));
    return AffineMap::get(rank, 0, exprs, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if ((maps[0] != map({0, 2}) && maps[0] != map({2, 0})) ||
      maps[2] != map({0, 1}) ||
      (maps[1] != map({2, 1}) && maps[1] != map({1, 2})))
    return op->emitError("ke.wgmma takes A stored M x K or K x M, B K x N "
                         "or N x K");
  mm.transposedA = maps[0] == map({2, 0});
  mm.transposedB = maps[1] == map({1, 2});
  mm.a = op.getDpsInputOperand(0)->get();
  mm.b = op.getDpsInputOperand(1)->get();
  mm.c = op.getDpsInitOperand(0)->get();
  for (Value v : {mm.a, mm.b, mm.c}) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
      return op->emitError("ke.wgmma needs static, contiguous operands");
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (mm.batched)
    mm.batch = ranges[0];
  mm.m = ranges[lead];
  mm.n = ranges[lead + 1];
  mm.k = ranges[lead + 2];
  return finishAnalysis(mm);
}

namespace {

/// What matmuls and convolutions share: element types, tile fits, the
/// fill and the epilogue.
FailureOr<WgmmaMatmul> finishAnalysis(WgmmaMatmul &mm) {
  Operation *op = mm.op;
  mm.element = getElementTypeOrSelf(mm.a.getType());
  if (mm.element != getElementTypeOrSelf(mm.b.getType()) ||
      !(mm.element.isF16() || mm.element.isBF16() || mm.element.isF32()) ||
      !getElementTypeOrSelf(mm.c.getType()).isF32())
    return op->emitError("ke.wgmma takes f16, bf16 or f32 (TF32) operands "
                         "and an f32 result");
  // wgmma transposes only 16-bit operands in shared memory: TF32 needs B
  // K-major, stored N x K.
  if (mm.element.isF32() && (!mm.transposedB || mm.transposedA))
    return op->emitError("ke.wgmma: TF32 takes A stored M x K and B N x K "
                         "only");
  // The sketch checks these; a hand-written attribute gets the same rules.
  // Partial tiles are zero-filled and their stores masked; every row of
  // every operand must start 16 bytes aligned for cp.async.
  // (A's rows run along K, or along M when it is stored K x M; B's along N,
  // or K when stored N x K; the result is stored in pairs.)
  int64_t vector = kCopyBytes / mm.elementBytes();
  if ((mm.transposedA ? mm.m : mm.k) % vector ||
      (mm.transposedB ? mm.k : mm.n) % vector || mm.n % 2)
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
  if (mm.tileRows() > 65535)
    return op->emitError("ke.wgmma: ")
           << mm.tileRows() << " tile rows exceed the grid's y (65535)";
  int64_t chunksPerRow = kSwizzleRowBytes / kCopyBytes;
  if ((mm.blockM * chunksPerRow) % mm.threads() ||
      (mm.blockN * chunksPerRow) % mm.threads())
    return op->emitError("ke.wgmma: the tiles do not split evenly over ")
           << mm.threads() << " threads";

  // The accumulator's fill, right before the matmul on the same buffer.
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || fill.getDpsInitOperand(0)->get() != mm.c)
    return op->emitError("ke.wgmma needs the accumulator's linalg.fill right "
                         "before the matmul");
  mm.init = fill.getDpsInputOperand(0)->get();
  if (!mm.init.getType().isF32())
    return op->emitError("ke.wgmma: the fill's value must be f32");
  if (failed(analyzeEpilogue(mm)))
    return failure();
  return mm;
}


} // namespace

uint64_t ke::encodeWgmmaDescriptorFields(uint64_t leadingBytes,
                                         uint64_t strideBytes) {
  return ((leadingBytes >> 4) & 0x3fff) << 16 |
         ((strideBytes >> 4) & 0x3fff) << 32 | uint64_t(1) << 62;
}


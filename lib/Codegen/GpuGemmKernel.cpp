//===- GpuGemmKernel.cpp - What the GEMM kernel builders share ------------===//
//
// analyzeMarkedGemm and GemmKernelBuilder (GpuGemmKernel.h): the marked op
// read as a GEMM with its fill and epilogue, and the kernel parts that do
// not depend on the matrix unit (wgmma or MFMA).
//
//===----------------------------------------------------------------------===//

#include "GpuGemmKernel.h"
#include "LinalgBody.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace ke;

namespace {

/// Finds the consumer marked as the GEMM's epilogue, if any, and checks
/// that a kernel can apply it per final sum: all loops parallel, one result
/// written through the identity, the GEMM's result read through the
/// identity (or a permutation, where `allowPermuted`) and nowhere else (a
/// temporary buffer).
LogicalResult analyzeEpilogue(MarkedGemm &mm, StringRef epilogueMark,
                              bool allowPermuted) {
  for (Operation *next = mm.op->getNextNode(); next;
       next = next->getNextNode()) {
    auto consumer = dyn_cast<linalg::LinalgOp>(next);
    if (!consumer || !consumer->hasAttr(epilogueMark))
      continue;
    if (consumer.getNumParallelLoops() != consumer.getNumLoops() ||
        consumer.getNumLoops() !=
            (mm.conv ? mm.conv->spatial + 2 : mm.batched ? 3u : 2u) ||
        consumer.getNumDpsInits() != 1 || !consumer.hasPureBufferSemantics() ||
        !consumer.getMatchingIndexingMap(consumer.getDpsInitOperand(0))
             .isIdentity())
      return consumer->emitError()
             << epilogueMark
             << ": not an elementwise op over the matmul's result";
    bool readsResult = false;
    for (OpOperand *input : consumer.getDpsInputOperands()) {
      if (input->get() != mm.c)
        continue;
      AffineMap read = consumer.getMatchingIndexingMap(input);
      if (!read.isIdentity() && !(allowPermuted && read.isPermutation()))
        return consumer->emitError()
               << epilogueMark
               << " reads the matmul's result through a permutation";
      if (readsResult && read != mm.epilogueRead)
        return consumer->emitError()
               << epilogueMark << " reads the matmul's result twice, "
               << "through different maps";
      mm.epilogueRead = read;
      readsResult = true;
    }
    auto alloc = mm.c.getDefiningOp<memref::AllocOp>();
    if (!readsResult || !alloc)
      return consumer->emitError()
             << epilogueMark
             << " must read the matmul's result from a temporary buffer";
    for (Operation *user : alloc->getUsers())
      if (user != mm.op && user != consumer && user != mm.op->getPrevNode() &&
          !isa<memref::DeallocOp>(user))
        return user->emitError()
               << epilogueMark << ": the matmul's result is used here too";
    mm.epilogue = consumer;
    return success();
  }
  return success();
}

LogicalResult checkOperands(MarkedGemm &mm, StringRef mark) {
  for (Value v : {mm.a, mm.b, mm.c}) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
      return mm.op->emitError() << mark
                                << " needs static, contiguous operands";
  }
  return success();
}

/// A marked channels-last 1-D, 2-D or 3-D convolution as an implicit GEMM.
template <typename ConvOp>
LogicalResult analyzeConv(MarkedGemm &mm, ConvOp conv, StringRef mark) {
  mm.a = conv.getInputs()[0];
  mm.b = conv.getInputs()[1];
  mm.c = conv.getOutputs()[0];
  if (failed(checkOperands(mm, mark)))
    return failure();
  // Filter ([kd,] [kh,] kw, c, f), output (n, [od,] [oh,] ow, f).
  ArrayRef<int64_t> filter = cast<MemRefType>(mm.b.getType()).getShape();
  ArrayRef<int64_t> output = cast<MemRefType>(mm.c.getType()).getShape();
  auto strides = llvm::to_vector(conv.getStrides().template getValues<int64_t>());
  auto dilations =
      llvm::to_vector(conv.getDilations().template getValues<int64_t>());
  ConvGeometry g;
  unsigned s = filter.size() - 2;
  g.spatial = s;
  if (s == 3) {
    g.outD = output[1];
    g.filterD = filter[0];
    g.strideD = strides[0];
    g.dilationD = dilations[0];
  }
  // A 1-D convolution is a 2-D one of height 1.
  if (s >= 2) {
    g.outH = output[s - 1];
    g.filterH = filter[s - 2];
    g.strideH = strides[s - 2];
    g.dilationH = dilations[s - 2];
  } else {
    g.outH = g.filterH = 1;
  }
  g.outW = output[s];
  g.filterW = filter[s - 1];
  g.channels = filter[s];
  g.strideW = strides[s - 1];
  g.dilationW = dilations[s - 1];
  mm.conv = g;
  mm.m = output[0] * g.outD * g.outH * g.outW;
  mm.n = filter[s + 1];
  mm.k = g.filterD * g.filterH * g.filterW * g.channels;
  // B, the filter as ([kd] kh kw c) x f, is stored K x N.
  mm.transposedB = false;
  return success();
}

/// A marked matmul or batch matmul: the operand layouts off its maps.
LogicalResult analyzeMatmul(MarkedGemm &mm, StringRef mark) {
  linalg::LinalgOp op = mm.op;
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
    return op->emitError() << mark
                           << " takes A stored M x K or K x M, B K x N or "
                              "N x K";
  mm.transposedA = maps[0] == map({2, 0});
  mm.transposedB = maps[1] == map({1, 2});
  mm.a = op.getDpsInputOperand(0)->get();
  mm.b = op.getDpsInputOperand(1)->get();
  mm.c = op.getDpsInitOperand(0)->get();
  if (failed(checkOperands(mm, mark)))
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (mm.batched)
    mm.batch = ranges[0];
  mm.m = ranges[lead];
  mm.n = ranges[lead + 1];
  mm.k = ranges[lead + 2];
  return success();
}

} // namespace

FailureOr<MarkedGemm> ke::analyzeMarkedGemm(linalg::LinalgOp op,
                                            StringRef mark,
                                            StringRef epilogueMark,
                                            bool allowPermutedEpilogue) {
  MarkedGemm mm;
  mm.op = op;
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv1DNwcWcfOp,
           linalg::Conv2DNhwcHwcfOp, linalg::Conv3DNdhwcDhwcfOp>(op) ||
      !op.hasPureBufferSemantics())
    return op->emitError() << mark
                           << " takes a bufferized linalg.matmul, "
                              "linalg.batch_matmul, linalg.conv_1d_nwc_wcf, "
                              "linalg.conv_2d_nhwc_hwcf or "
                              "linalg.conv_3d_ndhwc_dhwcf";
  if (auto conv1d = dyn_cast<linalg::Conv1DNwcWcfOp>(op.getOperation())) {
    if (failed(analyzeConv(mm, conv1d, mark)))
      return failure();
  } else if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation())) {
    if (failed(analyzeConv(mm, conv, mark)))
      return failure();
  } else if (auto conv3d =
                 dyn_cast<linalg::Conv3DNdhwcDhwcfOp>(op.getOperation())) {
    if (failed(analyzeConv(mm, conv3d, mark)))
      return failure();
  } else if (failed(analyzeMatmul(mm, mark))) {
    return failure();
  }
  mm.element = getElementTypeOrSelf(mm.a.getType());
  if (mm.element != getElementTypeOrSelf(mm.b.getType()) ||
      !(mm.element.isF16() || mm.element.isBF16() || mm.element.isF32()) ||
      !getElementTypeOrSelf(mm.c.getType()).isF32())
    return op->emitError() << mark
                           << " takes f16, bf16 or f32 (TF32) operands and "
                              "an f32 result";
  // The accumulator's fill, right before the GEMM on the same buffer.
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || fill.getDpsInitOperand(0)->get() != mm.c)
    return op->emitError()
           << mark
           << " needs the accumulator's linalg.fill right before the matmul";
  mm.fill = fill;
  mm.init = fill.getDpsInputOperand(0)->get();
  if (!mm.init.getType().isF32())
    return op->emitError() << mark << ": the fill's value must be f32";
  if (failed(analyzeEpilogue(mm, epilogueMark, allowPermutedEpilogue)))
    return failure();
  return mm;
}

FailureOr<int64_t> ke::readIntegerKnob(Operation *op, DictionaryAttr knobs,
                                       StringRef mark, StringRef name) {
  auto value = knobs.getAs<IntegerAttr>(name);
  if (!value)
    return op->emitError() << mark << ": missing integer '" << name << "'";
  return value.getInt();
}

SmallVector<linalg::LinalgOp> ke::collectMarkedOps(Operation *root,
                                                   StringRef mark) {
  SmallVector<linalg::LinalgOp> marked;
  root->walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(mark))
      marked.push_back(op);
  });
  return marked;
}

Value GemmKernelBuilder::index(int64_t v) {
  return b.create<arith::ConstantIndexOp>(v);
}

SmallVector<Value> GemmKernelBuilder::convInputIndices(Value row, Value k) {
  const ConvGeometry &g = *gemm.conv;
  SmallVector<Value> pixel = anchorIndices(row, index(0));
  Value tap = b.create<arith::DivUIOp>(k, index(g.channels));
  Value channel = b.create<arith::RemUIOp>(k, index(g.channels));
  Value kh = b.create<arith::DivUIOp>(tap, index(g.filterW));
  Value kw = b.create<arith::RemUIOp>(tap, index(g.filterW));
  auto at = [&](Value out, int64_t stride, Value tapIndex, int64_t dilation) {
    return b.create<arith::AddIOp>(
        b.create<arith::MulIOp>(out, index(stride)),
        b.create<arith::MulIOp>(tapIndex, index(dilation)));
  };
  if (g.spatial == 1)
    return {pixel[0], at(pixel[1], g.strideW, kw, g.dilationW), channel};
  if (g.spatial == 2)
    return {pixel[0], at(pixel[1], g.strideH, kh, g.dilationH),
            at(pixel[2], g.strideW, kw, g.dilationW), channel};
  // Taps (kd, kh, kw): kh above counts whole rows of taps, kd * KH + kh.
  Value kd = b.create<arith::DivUIOp>(kh, index(g.filterH));
  kh = b.create<arith::RemUIOp>(kh, index(g.filterH));
  return {pixel[0], at(pixel[1], g.strideD, kd, g.dilationD),
          at(pixel[2], g.strideH, kh, g.dilationH),
          at(pixel[3], g.strideW, kw, g.dilationW), channel};
}

SmallVector<Value> GemmKernelBuilder::anchorIndices(Value row, Value column) {
  if (gemm.conv) {
    const ConvGeometry &g = *gemm.conv;
    Value image =
        b.create<arith::DivUIOp>(row, index(g.outD * g.outH * g.outW));
    Value oh = b.create<arith::RemUIOp>(
        b.create<arith::DivUIOp>(row, index(g.outW)), index(g.outH));
    Value ow = b.create<arith::RemUIOp>(row, index(g.outW));
    if (g.spatial == 1)
      return {image, ow, column};
    if (g.spatial == 2)
      return {image, oh, ow, column};
    Value od = b.create<arith::RemUIOp>(
        b.create<arith::DivUIOp>(row, index(g.outH * g.outW)), index(g.outD));
    return {image, od, oh, ow, column};
  }
  if (gemm.batched)
    return {batchId, row, column};
  return {row, column};
}

Value GemmKernelBuilder::asMatrix(Value memref) {
  int64_t rank = cast<MemRefType>(memref.getType()).getRank();
  if (!gemm.conv || rank != gemm.conv->spatial + 2)
    return memref;
  // Every dimension but the last (f) as rows.
  SmallVector<ReassociationIndices> groups(2);
  for (int64_t d = 0; d + 1 < rank; ++d)
    groups[0].push_back(d);
  groups[1].push_back(rank - 1);
  return b.create<memref::CollapseShapeOp>(memref, groups);
}

SmallVector<Value> GemmKernelBuilder::epilogueIndices(Value row,
                                                     Value column) {
  SmallVector<Value> anchor = anchorIndices(row, column);
  if (!gemm.epilogue || gemm.epilogueRead.isIdentity())
    return anchor;
  // Result r of the read map is the anchor's index r, taken from the
  // epilogue's loop the map names there.
  SmallVector<Value> loops(anchor.size());
  for (unsigned r = 0; r < anchor.size(); ++r)
    loops[gemm.epilogueRead.getDimPosition(r)] = anchor[r];
  return loops;
}

Value GemmKernelBuilder::applyEpilogue(Value value, Value row, Value column) {
  return applyLinalgBody(b, gemm.epilogue, epilogueIndices(row, column),
                         [&](OpOperand &operand) {
                           return operand.get() == gemm.c ? value : Value();
                         });
}

Value GemmKernelBuilder::finish(Value sum, Value row, Value column) {
  Value v = b.create<arith::AddFOp>(sum, gemm.init);
  return gemm.epilogue ? applyEpilogue(v, row, column) : v;
}

Value GemmKernelBuilder::resultMatrix() {
  return asMatrix(gemm.epilogue ? gemm.epilogue.getDpsInitOperand(0)->get()
                                : gemm.c);
}

std::pair<Value, Value> GemmKernelBuilder::rasterize(Value blockY,
                                                     Value blockX,
                                                     int64_t tileRows,
                                                     int64_t tileCols,
                                                     int64_t group) {
  group = std::min(group, tileRows);
  if (group <= 1)
    return {blockY, blockX};
  Value linear = b.create<arith::AddIOp>(
      b.create<arith::MulIOp>(blockY, index(tileCols)), blockX);
  Value groupSize = index(group * tileCols);
  Value groupId = b.create<arith::DivUIOp>(linear, groupSize);
  Value inGroup = b.create<arith::RemUIOp>(linear, groupSize);
  Value firstRow = b.create<arith::MulIOp>(groupId, index(group));
  // The last group may have fewer rows.
  Value rows = b.create<arith::MinUIOp>(
      b.create<arith::SubIOp>(index(tileRows), firstRow), index(group));
  Value tileRow =
      b.create<arith::AddIOp>(firstRow, b.create<arith::RemUIOp>(inGroup, rows));
  Value tileCol = b.create<arith::DivUIOp>(inGroup, rows);
  return {tileRow, tileCol};
}

Value GemmKernelBuilder::insideResult(Value row, Value column, int64_t blockM,
                                      int64_t blockN) {
  Value inside;
  if (gemm.m % blockM)
    inside =
        b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, row, index(gemm.m));
  if (gemm.n % blockN) {
    Value in = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, column,
                                       index(gemm.n));
    inside = inside ? b.create<arith::AndIOp>(inside, in).getResult() : in;
  }
  return inside;
}

void GemmKernelBuilder::insideResultOnly(Value row, Value column,
                                         int64_t blockM, int64_t blockN,
                                         llvm::function_ref<void()> body) {
  Value inside = insideResult(row, column, blockM, blockN);
  if (!inside)
    return body();
  auto guard = b.create<scf::IfOp>(inside, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard restore(b);
  b.setInsertionPointToStart(guard.thenBlock());
  body();
}

void GemmKernelBuilder::beginBlockTile(gpu::LaunchOp launch, int64_t blockM,
                                       int64_t blockN, int64_t groupM,
                                       bool linearGrid) {
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  b.create<gpu::TerminatorOp>();
  b.setInsertionPointToStart(&body);
  batchId = launch.getBlockIds().z;
  int64_t tileCols = llvm::divideCeil(gemm.n, blockN);
  Value blockY = launch.getBlockIds().y, blockX = launch.getBlockIds().x;
  if (linearGrid) {
    blockY = b.create<arith::DivUIOp>(launch.getBlockIds().x, index(tileCols));
    blockX = b.create<arith::RemUIOp>(launch.getBlockIds().x, index(tileCols));
  }
  auto [tileRow, tileCol] = rasterize(
      blockY, blockX, llvm::divideCeil(gemm.m, blockM), tileCols, groupM);
  mBase = b.create<arith::MulIOp>(tileRow, index(blockM));
  nBase = b.create<arith::MulIOp>(tileCol, index(blockN));
  thread = launch.getThreadIds().x;
}

void GemmKernelBuilder::eraseMarkedOps() {
  Operation *temporary = gemm.c.getDefiningOp();
  if (gemm.epilogue)
    gemm.epilogue->erase();
  gemm.op->erase();
  gemm.fill->erase();
  // The epilogue's input, now never written or read.
  if (gemm.epilogue) {
    for (Operation *user : llvm::make_early_inc_range(temporary->getUsers()))
      user->erase();
    temporary->erase();
  }
}

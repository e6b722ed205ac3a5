//===- GpuTranspose.cpp - Transposes through shared-memory tiles ----------===//
//
// ke-gpu-transpose (ke/Codegen/Passes.td), a step of the GPU lowering. The
// gpu.transpose sketch (lib/Sketch/GpuTransposeRule.cpp) bufferizes a
// linalg.transpose that moves the innermost dimension and marks it
// `ke.transpose = {tile, rows}`; here it becomes one kernel, the classic
// shared-memory transpose:
//
//   the transpose is taken over its merged dimensions (ke/Workload/
//     Transpose.h: NCHW -> NHWC as N x C x HW -> N x HW x C), both
//     buffers collapsed to them;
//   a block moves a tile x tile square: Q, the output dimension the input
//     holds innermost, by P, the output's innermost; the other dimensions
//     and the squares are one grid along x;
//   tile x rows threads; thread (x, y) reads the input at q = x, p = y +
//     j * rows (j < tile / rows), adjacent threads adjacent elements, into
//     a shared [p][q] tile whose rows are padded by one element (so that
//     the column reads below hit every bank once); a barrier; then it
//     writes the output at p = x, q = y + j * rows from tile[x][q];
//   elements past an extent are neither read nor written.
//
//===----------------------------------------------------------------------===//

#include "GpuRowKernel.h"

#include "ke/Codegen/Passes.h"
#include "ke/Workload/Transpose.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace ke;

namespace ke {
#define GEN_PASS_DEF_GPUTRANSPOSEPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

constexpr llvm::StringLiteral kTransposeAttr = "ke.transpose";

/// A marked transpose and its knobs, checked.
struct MarkedTranspose {
  linalg::TransposeOp op;
  MergedTranspose merged;
  int64_t tile = 32, rows = 8;
  /// Q and P (see the file comment) and the number of squares along each.
  unsigned q = 0, p = 0;
  int64_t tilesQ = 1, tilesP = 1;
  /// The merged output dimensions other than Q and P, in order, and the
  /// number of their index combinations.
  SmallVector<unsigned> others;
  int64_t batches = 1;

  int64_t blocks() const { return tilesQ * tilesP * batches; }
};

FailureOr<MarkedTranspose> analyze(linalg::TransposeOp op) {
  auto knobs = op->getAttrOfType<DictionaryAttr>(kTransposeAttr);
  auto tile = knobs ? knobs.getAs<IntegerAttr>("tile") : IntegerAttr();
  auto rows = knobs ? knobs.getAs<IntegerAttr>("rows") : IntegerAttr();
  if (!tile || !rows)
    return op->emitError("ke.transpose must be a dictionary with integer "
                         "'tile' and 'rows'");
  MarkedTranspose t;
  t.op = op;
  t.tile = tile.getInt();
  t.rows = rows.getInt();
  if (t.tile < 1 || t.rows < 1 || t.tile % t.rows || t.tile * t.rows > 1024)
    return op->emitError("ke.transpose: rows must divide tile, with at most "
                         "1024 threads");
  if (!op.hasPureBufferSemantics())
    return op->emitError("ke.transpose: the transpose must be bufferized");
  for (Value v : {op.getInput(), op.getInit()}) {
    auto type = cast<MemRefType>(v.getType());
    if (!type.hasStaticShape() || !type.getLayout().isIdentity())
      return op->emitError("ke.transpose needs static, contiguous buffers");
  }
  t.merged = mergeTranspose(cast<MemRefType>(op.getInit().getType()).getShape(),
                            op.getPermutation());
  if (!t.merged.movesInnermost())
    return op->emitError("ke.transpose: the input and the output hold the "
                         "same dimension innermost (a copy)");
  t.p = t.merged.rank() - 1;
  t.q = t.merged.inputInnermost();
  t.tilesP = llvm::divideCeil(t.merged.shape[t.p], t.tile);
  t.tilesQ = llvm::divideCeil(t.merged.shape[t.q], t.tile);
  for (unsigned d = 0; d < t.merged.rank(); ++d)
    if (d != t.p && d != t.q) {
      t.others.push_back(d);
      t.batches *= t.merged.shape[d];
    }
  if (t.blocks() > std::numeric_limits<int32_t>::max())
    return op->emitError("ke.transpose: ")
           << t.blocks() << " blocks exceed the grid";
  return t;
}

class TransposeBuilder {
public:
  explicit TransposeBuilder(const MarkedTranspose &marked)
      : t(marked), b(t.op->getLoc(), t.op.getOperation()) {}

  void build();

private:
  Value index(int64_t v) { return b.create<arith::ConstantIndexOp>(v); }
  /// `memref` collapsed by `groups` (as it is where nothing merges).
  Value collapse(Value memref, ArrayRef<ReassociationIndices> groups);
  /// The merged input's indices of merged output indices `out`.
  SmallVector<Value> inputIndices(ArrayRef<Value> out);
  /// `inside` and (q < extent of Q, p < extent of P), where partial.
  Value within(Value q, Value p);

  MarkedTranspose t;
  ImplicitLocOpBuilder b;
};

Value TransposeBuilder::collapse(Value memref,
                                 ArrayRef<ReassociationIndices> groups) {
  if (groups.size() == size_t(cast<MemRefType>(memref.getType()).getRank()))
    return memref;
  return b.create<memref::CollapseShapeOp>(memref, groups);
}

SmallVector<Value> TransposeBuilder::inputIndices(ArrayRef<Value> out) {
  SmallVector<Value> in(out.size());
  for (unsigned d = 0; d < out.size(); ++d)
    in[t.merged.permutation[d]] = out[d];
  return in;
}

Value TransposeBuilder::within(Value q, Value p) {
  Value inside;
  auto check = [&](Value v, int64_t extent) {
    if (extent % t.tile == 0)
      return;
    Value c = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, v,
                                      index(extent));
    inside = inside ? b.create<arith::AndIOp>(inside, c).getResult() : c;
  };
  check(q, t.merged.shape[t.q]);
  check(p, t.merged.shape[t.p]);
  return inside;
}

void TransposeBuilder::build() {
  Value input = collapse(t.op.getInput(), t.merged.inputGroups);
  Value output = collapse(t.op.getInit(), t.merged.outputGroups);
  Type element = getElementTypeOrSelf(output.getType());
  auto launch = b.create<gpu::LaunchOp>(index(t.blocks()), index(1), index(1),
                                        index(t.tile), index(t.rows),
                                        index(1));
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  b.create<gpu::TerminatorOp>();
  b.setInsertionPointToStart(&body);

  // Block x: the square along P fastest, then along Q, then the others
  // (the last fastest).
  Value block = launch.getBlockIds().x;
  Value tileP = b.create<arith::RemUIOp>(block, index(t.tilesP));
  Value rest = b.create<arith::DivUIOp>(block, index(t.tilesP));
  Value tileQ = b.create<arith::RemUIOp>(rest, index(t.tilesQ));
  Value batch = b.create<arith::DivUIOp>(rest, index(t.tilesQ));
  SmallVector<Value> out(t.merged.rank());
  for (unsigned d : llvm::reverse(t.others)) {
    int64_t extent = t.merged.shape[d];
    out[d] = b.create<arith::RemUIOp>(batch, index(extent));
    batch = b.create<arith::DivUIOp>(batch, index(extent));
  }
  Value qBase = b.create<arith::MulIOp>(tileQ, index(t.tile));
  Value pBase = b.create<arith::MulIOp>(tileP, index(t.tile));
  Value x = launch.getThreadIds().x, y = launch.getThreadIds().y;

  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  Value shared = b.create<memref::AllocOp>(MemRefType::get(
      {t.tile, t.tile + 1}, element, AffineMap(), workgroup));

  // Runs `body` under `inside` when it is set.
  auto guarded = [&](Value inside, llvm::function_ref<void()> body) {
    scf::IfOp guard;
    if (inside) {
      guard = b.create<scf::IfOp>(inside, /*withElseRegion=*/false);
      b.setInsertionPointToStart(guard.thenBlock());
    }
    body();
    if (guard)
      b.setInsertionPointAfter(guard);
  };
  for (int64_t j = 0; j < t.tile / t.rows; ++j) {
    Value row = b.create<arith::AddIOp>(y, index(j * t.rows));
    out[t.q] = b.create<arith::AddIOp>(qBase, x);
    out[t.p] = b.create<arith::AddIOp>(pBase, row);
    guarded(within(out[t.q], out[t.p]), [&] {
      Value v = b.create<memref::LoadOp>(input, inputIndices(out));
      b.create<memref::StoreOp>(v, shared, ValueRange{row, x});
    });
  }
  b.create<gpu::BarrierOp>();
  for (int64_t j = 0; j < t.tile / t.rows; ++j) {
    Value row = b.create<arith::AddIOp>(y, index(j * t.rows));
    out[t.q] = b.create<arith::AddIOp>(qBase, row);
    out[t.p] = b.create<arith::AddIOp>(pBase, x);
    guarded(within(out[t.q], out[t.p]), [&] {
      Value v = b.create<memref::LoadOp>(shared, ValueRange{x, row});
      b.create<memref::StoreOp>(v, output, out);
    });
  }
  t.op->erase();
}

struct GpuTransposePass final
    : ke::impl::GpuTransposePassBase<GpuTransposePass> {
  void runOnOperation() override {
    for (linalg::TransposeOp op :
         collectMarked<linalg::TransposeOp>(getOperation(), kTransposeAttr)) {
      FailureOr<MarkedTranspose> t = analyze(op);
      if (failed(t))
        return signalPassFailure();
      TransposeBuilder(*t).build();
    }
  }
};

} // namespace

//===- GpuRowKernel.cpp - What the row kernel builders share --------------===//

#include "GpuRowKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace ke;

int64_t RowGeometry::blocks() const {
  return llvm::divideCeil(rows, rowsPerBlock);
}

int64_t RowGeometry::steps() const {
  return llvm::divideCeil(cols, rowThreads * vec);
}

FailureOr<RowGeometry> ke::readRowGeometry(Operation *op, StringRef mark,
                                           int64_t rows, int64_t cols) {
  auto fail = [&](const Twine &why) {
    return op->emitError() << mark << ": " << why;
  };
  auto knobs = op->getAttrOfType<DictionaryAttr>(mark);
  if (!knobs)
    return fail("the mark is not a dictionary");
  RowGeometry g;
  g.rows = rows;
  g.cols = cols;
  int64_t *fields[] = {&g.rowThreads, &g.rowsPerBlock, &g.vec, &g.warp};
  const char *names[] = {"row_threads", "rows", "vec", "warp"};
  for (auto [field, name] : llvm::zip(fields, names)) {
    auto value = knobs.getAs<IntegerAttr>(name);
    if (!value)
      return fail(Twine("missing integer '") + name + "'");
    *field = value.getInt();
    if (*field <= 0 || !llvm::isPowerOf2_64(*field))
      return fail("row_threads, rows, vec and warp must be powers of two");
  }
  if (rows <= 0 || cols <= 0)
    return fail("expects non-empty rows");
  if (cols % g.vec != 0)
    return fail("vec must divide the row");
  // The shuffles name every lane of the warp.
  if (g.blockThreads() % g.warp != 0)
    return fail("a block must be whole warps");
  if (cols > std::numeric_limits<int32_t>::max())
    return fail("rows longer than 2^31 - 1");
  return g;
}

linalg::FillOp ke::findFillBefore(Operation *op, Value buffer) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev);
        fill && fill.getOutputs()[0] == buffer)
      return fill;
    if (llvm::is_contained(prev->getOperands(), buffer))
      return nullptr;
  }
  return nullptr;
}

RowKernelBuilder::RowKernelBuilder(Operation *op, const RowGeometry &geometry)
    : g(geometry), b(op->getLoc(), op) {}

Value RowKernelBuilder::index(int64_t v) {
  return b.create<arith::ConstantIndexOp>(v);
}

gpu::LaunchOp RowKernelBuilder::beginLaunch() {
  auto launch = b.create<gpu::LaunchOp>(index(g.blocks()), index(1), index(1),
                                        index(g.blockThreads()), index(1),
                                        index(1));
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  b.create<gpu::TerminatorOp>();
  b.setInsertionPointToStart(&body);
  Value thread = launch.getThreadIds().x;
  lane = b.create<arith::RemUIOp>(thread, index(g.rowThreads));
  rowInBlock = b.create<arith::DivUIOp>(thread, index(g.rowThreads));
  row = b.create<arith::AddIOp>(
      b.create<arith::MulIOp>(launch.getBlockIds().x, index(g.rowsPerBlock)),
      rowInBlock);
  if (g.rows % g.rowsPerBlock != 0)
    rowInside = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, row,
                                        index(g.rows));
  return launch;
}

/// `memref` (contiguous) as a `rank`-D one of R (x C) elements: its
/// leading dimensions collapsed, or a unit row dimension added.
static Value reshapeTo(ImplicitLocOpBuilder &b, Value memref, int64_t rank,
                       ArrayRef<int64_t> shape) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t have = type.getRank();
  if (have == rank)
    return memref;
  if (have < rank) {
    SmallVector<ReassociationIndices> groups;
    if (have == 1)
      groups.push_back({0, 1});
    return b.create<memref::ExpandShapeOp>(
        MemRefType::get(shape, type.getElementType()), memref, groups);
  }
  SmallVector<ReassociationIndices> groups(rank);
  for (int64_t d = 0; d < have; ++d)
    groups[rank == 2 && d == have - 1 ? 1 : 0].push_back(d);
  return b.create<memref::CollapseShapeOp>(memref, groups);
}

Value RowKernelBuilder::asRows(Value memref) {
  return reshapeTo(b, memref, 2, {g.rows, g.cols});
}

Value RowKernelBuilder::asRowResults(Value memref) {
  return reshapeTo(b, memref, 1, {g.rows});
}

Value RowKernelBuilder::columnOf(Value step) {
  return b.create<arith::MulIOp>(
      b.create<arith::AddIOp>(b.create<arith::MulIOp>(step, index(g.rowThreads)),
                              lane),
      index(g.vec));
}

Value RowKernelBuilder::inside(Value column) {
  Value result = rowInside;
  if (g.cols % (g.rowThreads * g.vec) != 0) {
    Value columnInside = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult,
                                                 column, index(g.cols));
    result = result ? b.create<arith::AndIOp>(result, columnInside)
                    : columnInside;
  }
  return result;
}

Value RowKernelBuilder::firstOfRow() {
  Value first =
      b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, lane, index(0));
  return rowInside ? b.create<arith::AndIOp>(first, rowInside) : first;
}

SmallVector<Value> RowKernelBuilder::combineRow(
    ValueRange state,
    function_ref<SmallVector<Value>(ValueRange, ValueRange)> combine) {
  SmallVector<Value> values(state);
  // Within a warp: lanes l and l ^ offset belong to one row for every
  // offset below the row's threads (rows are aligned groups of lanes).
  int64_t inWarp = std::min(g.rowThreads, g.warp);
  for (int64_t offset = inWarp / 2; offset >= 1; offset /= 2) {
    SmallVector<Value> other;
    for (Value v : values)
      other.push_back(b.create<gpu::ShuffleOp>(v, int32_t(offset),
                                               int32_t(g.warp),
                                               gpu::ShuffleMode::XOR)
                          .getShuffleResult());
    values = combine(values, other);
  }
  if (g.rowThreads <= g.warp)
    return values;

  // Across the row's warps: each warp's first lane stores the warp's
  // result, every thread combines the row's after a barrier.
  int64_t warpsPerRow = g.rowThreads / g.warp;
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  SmallVector<Value> buffers;
  for (Value v : values)
    buffers.push_back(b.create<memref::AllocOp>(
        MemRefType::get({g.rowsPerBlock, warpsPerRow}, v.getType(),
                        AffineMap(), workgroup)));
  Value warpInRow = b.create<arith::DivUIOp>(lane, index(g.warp));
  Value first = b.create<arith::CmpIOp>(
      arith::CmpIPredicate::eq, b.create<arith::RemUIOp>(lane, index(g.warp)),
      index(0));
  b.create<scf::IfOp>(first, [&](OpBuilder &nested, Location loc) {
    for (auto [v, buffer] : llvm::zip(values, buffers))
      memref::StoreOp::create(nested, loc, v, buffer,
                              ValueRange{rowInBlock, warpInRow});
    scf::YieldOp::create(nested, loc);
  });
  b.create<gpu::BarrierOp>();
  auto load = [&](int64_t w) {
    SmallVector<Value> loaded;
    for (Value buffer : buffers)
      loaded.push_back(
          b.create<memref::LoadOp>(buffer, ValueRange{rowInBlock, index(w)}));
    return loaded;
  };
  values = load(0);
  for (int64_t w = 1; w < warpsPerRow; ++w)
    values = combine(values, load(w));
  return values;
}

SmallVector<Value> RowKernelBuilder::forEachVector(
    ValueRange init,
    function_ref<SmallVector<Value>(Value, ValueRange)> step) {
  auto loop = b.create<scf::ForOp>(index(0), index(g.steps()), index(1), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  if (init.empty())
    b.setInsertionPoint(loop.getBody()->getTerminator());
  ValueRange carried = loop.getRegionIterArgs();
  Value column = columnOf(loop.getInductionVar());
  SmallVector<Value> next;
  if (Value in = inside(column)) {
    auto ifOp = b.create<scf::IfOp>(TypeRange(carried), in,
                                    /*withElseRegion=*/!init.empty());
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    if (init.empty()) {
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      step(column, carried);
    } else {
      b.create<scf::YieldOp>(step(column, carried));
      b.setInsertionPointToStart(ifOp.elseBlock());
      b.create<scf::YieldOp>(carried);
      next.assign(ifOp.getResults().begin(), ifOp.getResults().end());
    }
  } else {
    next = step(column, carried);
  }
  if (!init.empty())
    b.create<scf::YieldOp>(next);
  return SmallVector<Value>(loop.getResults());
}

//===- GpuRowArgmax.cpp - argmax / argmin kernels over rows ---------------===//
//
// ke-gpu-row-argmax (ke/Codegen/Passes.td). The gpu.argrow sketch
// (lib/Sketch/GpuArgRowRule.cpp) marks a bufferized arg reduction
// (ke/Workload/ArgReduction.h: the first maximum or minimum of each row and
// its position) `ke.argrow = {row_threads, rows, vec, warp}`; here it
// becomes one kernel on RowKernelBuilder (GpuRowKernel.h):
//
//   scan      each thread reads its vectors of the row once and keeps its
//             best value (in f32 for 16-bit rows: exact), the position of
//             its first best (-1 while the init is best) and whether it saw
//             a NaN
//   combine   two partial results: the better value, ties to the smaller
//             position (two partials tie only on elements: an element equal
//             to the best so far never replaces it); NaN flags or'ed
//   store     the row's first thread stores the value and the position
//             (the init's index where no element was better)
//
// That is the sequential answer for rows without NaN. A row with a NaN
// (where the body's order matters: a maximumf keeps it, a comparison never
// takes it) is scanned again in order by its first thread, which runs the
// body itself. The linalg.fill of each init right before the op is folded
// into the kernel; other inits are read from memory.
//
//===----------------------------------------------------------------------===//

#include "GpuRowKernel.h"

#include "ke/Codegen/Passes.h"
#include "ke/Workload/ArgReduction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace ke;

namespace ke {
#define GEN_PASS_DEF_GPUROWARGMAXPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

constexpr llvm::StringLiteral kMark = "ke.argrow";

/// A marked arg reduction with its rows and inits.
struct RowArgmax {
  linalg::LinalgOp op;
  ArgReduction arg;
  RowGeometry geometry;
  /// The linalg.fill of each init (value, index) right before the op, or
  /// null (then the init is read from memory).
  linalg::FillOp fills[2] = {nullptr, nullptr};
};

FailureOr<RowArgmax> analyze(linalg::LinalgOp op) {
  auto fail = [&](const Twine &why) {
    return op->emitError() << kMark << ": " << why;
  };
  if (!op.hasPureBufferSemantics())
    return fail("expects a bufferized op");
  std::optional<ArgReduction> arg = matchArgReduction(op);
  if (!arg)
    return fail("expects an argmax or argmin over the innermost loop");
  for (Value operand : op->getOperands()) {
    auto type = cast<MemRefType>(operand.getType());
    if (!type.hasStaticShape() || !type.getLayout().isIdentity())
      return fail("expects static, contiguous operands");
  }
  if (cast<FloatType>(arg->valueType).getWidth() > 32)
    return fail("expects values of at most 32 bits");
  RowArgmax r;
  r.op = op;
  r.arg = *arg;
  auto input = cast<MemRefType>(op.getDpsInputs()[0].getType());
  int64_t cols = input.getRank() ? input.getShape().back() : 1;
  FailureOr<RowGeometry> geometry = readRowGeometry(
      op, kMark, cols ? input.getNumElements() / cols : 0, cols);
  if (failed(geometry))
    return failure();
  r.geometry = *geometry;
  // A fill whose scalar is not of the element's type (a cast) is left.
  for (int i = 0; i < 2; ++i) {
    linalg::FillOp fill = findFillBefore(op, op.getDpsInits()[i]);
    if (fill && fill.getInputs()[0].getType() ==
                    getElementTypeOrSelf(op.getDpsInits()[i].getType()))
      r.fills[i] = fill;
  }
  return r;
}

class RowArgmaxBuilder : RowKernelBuilder {
public:
  explicit RowArgmaxBuilder(RowArgmax argmax)
      : RowKernelBuilder(argmax.op, argmax.geometry), r(argmax) {}

  void build();

private:
  /// (value, position, NaN seen) combined with another thread's.
  SmallVector<Value> combine(ValueRange a, ValueRange other);
  /// The row's result in the body's types, scanning it in order with the
  /// body from (`value`, `position`).
  std::pair<Value, Value> scanInOrder(Value value, Value position);
  Value toState(Value value) {
    return value.getType() == state ? value
                                    : b.create<arith::ExtFOp>(state, value);
  }

  RowArgmax r;
  /// The scan's value type: f32 (exact for 16-bit values).
  Type state;
  Value input;
};

SmallVector<Value> RowArgmaxBuilder::combine(ValueRange a, ValueRange other) {
  Value strictly = b.create<arith::CmpFOp>(r.arg.predicate, other[0], a[0]);
  Value tie = b.create<arith::AndIOp>(
      b.create<arith::CmpFOp>(arith::CmpFPredicate::OEQ, other[0], a[0]),
      b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, other[1], a[1]));
  Value better = b.create<arith::OrIOp>(strictly, tie);
  return {b.create<arith::SelectOp>(better, other[0], a[0]),
          b.create<arith::SelectOp>(better, other[1], a[1]),
          b.create<arith::OrIOp>(a[2], other[2])};
}

std::pair<Value, Value> RowArgmaxBuilder::scanInOrder(Value value,
                                                      Value position) {
  Block *body = r.op.getBlock();
  auto loop = b.create<scf::ForOp>(index(0), index(g.cols), index(1),
                                   ValueRange{value, position});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  IRMapping mapping;
  mapping.map(body->getArgument(0),
              b.create<memref::LoadOp>(input, ValueRange{row, j}));
  mapping.map(body->getArgument(1), loop.getRegionIterArgs()[0]);
  mapping.map(body->getArgument(2), loop.getRegionIterArgs()[1]);
  for (Operation &o : body->without_terminator()) {
    if (isa<linalg::IndexOp>(o)) // the innermost loop's (ArgReduction.h)
      mapping.map(o.getResult(0), j);
    else
      b.clone(o, mapping);
  }
  SmallVector<Value> yielded;
  for (Value v : body->getTerminator()->getOperands())
    yielded.push_back(mapping.lookup(v));
  b.create<scf::YieldOp>(yielded);
  return {loop.getResult(0), loop.getResult(1)};
}

void RowArgmaxBuilder::build() {
  beginLaunch();
  state = b.getF32Type();
  Type valueType = r.arg.valueType, indexType = r.arg.indexType;
  input = asRows(r.op.getDpsInputs()[0]);
  Value values = asRowResults(r.op.getDpsInits()[0]);
  Value indices = asRowResults(r.op.getDpsInits()[1]);
  auto i32 = b.getI32Type();
  auto constantI32 = [&](int32_t v) {
    return b.create<arith::ConstantOp>(i32, b.getI32IntegerAttr(v));
  };

  // The inits: the fills' values, or each row's (a row past the last reads
  // the last row's, never stores).
  Value initValue, initIndex;
  Value clamped = rowInside ? Value(b.create<arith::MinUIOp>(
                                  row, index(g.rows - 1)))
                            : row;
  initValue = r.fills[0] ? r.fills[0].getInputs()[0]
                         : Value(b.create<memref::LoadOp>(values, clamped));
  initIndex = r.fills[1] ? r.fills[1].getInputs()[0]
                         : Value(b.create<memref::LoadOp>(indices, clamped));

  // The scan: (best value, its position or -1 for the init, NaN seen).
  SmallVector<Value> partial = forEachVector(
      {toState(initValue), constantI32(-1),
       b.create<arith::ConstantOp>(b.getBoolAttr(false))},
      [&](Value column, ValueRange carried) {
        Value x = b.create<vector::LoadOp>(VectorType::get({g.vec}, valueType),
                                           input, ValueRange{row, column});
        Value best = carried[0], position = carried[1], nan = carried[2];
        Value base = b.create<arith::IndexCastOp>(i32, column);
        for (int64_t e = 0; e < g.vec; ++e) {
          Value element = toState(b.create<vector::ExtractOp>(x, e));
          nan = b.create<arith::OrIOp>(
              nan, b.create<arith::CmpFOp>(arith::CmpFPredicate::UNO, element,
                                           element));
          Value better =
              b.create<arith::CmpFOp>(r.arg.predicate, element, best);
          best = b.create<arith::SelectOp>(better, element, best);
          position = b.create<arith::SelectOp>(
              better, b.create<arith::AddIOp>(base, constantI32(e)), position);
        }
        return SmallVector<Value>{best, position, nan};
      });
  // The NaN flag crosses the shuffles as an i32.
  partial[2] = b.create<arith::ExtUIOp>(i32, partial[2]);
  SmallVector<Value> result =
      combineRow(partial, [&](ValueRange a, ValueRange other) {
        SmallVector<Value> x(a), y(other);
        x[2] = b.create<arith::TruncIOp>(b.getI1Type(), x[2]);
        y[2] = b.create<arith::TruncIOp>(b.getI1Type(), y[2]);
        SmallVector<Value> c = combine(x, y);
        c[2] = b.create<arith::ExtUIOp>(i32, c[2]);
        return c;
      });
  Value hasNan = b.create<arith::CmpIOp>(arith::CmpIPredicate::ne, result[2],
                                         constantI32(0));

  // The row's first thread stores.
  auto first = b.create<scf::IfOp>(firstOfRow(), /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(first.thenBlock()->getTerminator());
    auto pick = b.create<scf::IfOp>(TypeRange{valueType, indexType}, hasNan,
                                    /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(pick.thenBlock());
      auto [value, index] = scanInOrder(initValue, initIndex);
      b.create<scf::YieldOp>(ValueRange{value, index});
      b.setInsertionPointToStart(pick.elseBlock());
      Value value2 = result[0];
      if (valueType != state) // exact: a 16-bit value widened
        value2 = b.create<arith::TruncFOp>(valueType, value2);
      Value position = result[1];
      Value found = b.create<arith::CmpIOp>(arith::CmpIPredicate::sge,
                                            position, constantI32(0));
      Value asIndex =
          indexType.isIndex()
              ? Value(b.create<arith::IndexCastOp>(indexType, position))
          : cast<IntegerType>(indexType).getWidth() > 32
              ? Value(b.create<arith::ExtSIOp>(indexType, position))
          : cast<IntegerType>(indexType).getWidth() < 32
              ? Value(b.create<arith::TruncIOp>(indexType, position))
              : position;
      b.create<scf::YieldOp>(ValueRange{
          value2, b.create<arith::SelectOp>(found, asIndex, initIndex)});
    }
    b.create<memref::StoreOp>(pick.getResult(0), values, ValueRange{row});
    b.create<memref::StoreOp>(pick.getResult(1), indices, ValueRange{row});
  }
  r.op->erase();
  for (linalg::FillOp fill : r.fills)
    if (fill)
      fill->erase();
}

struct GpuRowArgmaxPass final
    : ke::impl::GpuRowArgmaxPassBase<GpuRowArgmaxPass> {
  void runOnOperation() override {
    for (linalg::LinalgOp op : collectMarked<linalg::LinalgOp>(getOperation(), kMark)) {
      FailureOr<RowArgmax> r = analyze(op);
      if (failed(r))
        return signalPassFailure();
      RowArgmaxBuilder(*r).build();
    }
  }
};

} // namespace

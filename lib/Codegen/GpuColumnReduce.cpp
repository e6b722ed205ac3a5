//===- GpuColumnReduce.cpp - Reductions along an outer loop ---------------===//
//
// ke-gpu-column-reduce (ke/Codegen/Passes.td), a step of the GPU lowering.
// The gpu.colreduce sketch (lib/Sketch/GpuColumnReduceRule.cpp) bufferizes
// a reduction whose one reduction loop is not the innermost
// (ke/Workload/ColumnReduction.h) and marks it `ke.colreduce = {threads_x,
// threads_y, unroll}`; here it becomes one kernel:
//
//   the loops as (batch, rows, columns): the parallel loops before the
//     reduction loop, the reduction loop, the parallel loops after it;
//   grid along x: column tiles of threads_x, fastest, times the batch;
//   thread (x, y) takes column x of its tile and rows y * unroll + j *
//     threads_y * unroll (+ 0 .. unroll - 1), applying the op's body from
//     the combiner's neutral element: `unroll` rows' loads issue before
//     their combines, and a warp reads 32 adjacent elements of a row;
//     rows past the last whole step run one at a time;
//   with threads_y > 1 the partial results meet in shared memory ([y][x]),
//     and after a barrier thread (x, 0) combines them in order of y with
//     the combiner alone (a body such as acc + x*x applies once per row,
//     never to partial results);
//   the result is the init (the value of the linalg.fill right before the
//     op, which goes; else the output's element) combined with the sum,
//     stored by thread (x, 0); columns past the last are neither read nor
//     written.
//
// Every order of combination is fixed: the result is the same from run to
// run.
//
//===----------------------------------------------------------------------===//

#include "GpuRowKernel.h"
#include "LinalgBody.h"

#include "ke/Codegen/Passes.h"
#include "ke/Workload/ColumnReduction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace ke;

namespace ke {
#define GEN_PASS_DEF_GPUCOLUMNREDUCEPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

constexpr llvm::StringLiteral kColumnReduceAttr = "ke.colreduce";
constexpr llvm::StringLiteral kEpilogueAttr = "ke.colreduce.epilogue";

/// A marked column reduction and its knobs, checked.
struct MarkedColumnReduction {
  linalg::LinalgOp op;
  ColumnReduction c;
  int64_t threadsX = 32, threadsY = 1, unroll = 1;
  /// The neutral element of the combiner, each thread's first partial
  /// result.
  TypedAttr neutral;
  /// The elementwise consumer marked `ke.colreduce.epilogue`, applied to
  /// each result before it is stored (then the op's output is a temporary
  /// that is never written), or null.
  linalg::LinalgOp epilogue;

  int64_t columnTiles() const {
    return llvm::divideCeil(c.columns, threadsX);
  }
};

/// The consumer marked `ke.colreduce.epilogue` after `m.op` in its block:
/// elementwise over the op's output, reading it (a temporary only the op,
/// its fill and the consumer use) through the identity, writing one output
/// through the identity, its other operands through projected
/// permutations.
LogicalResult findEpilogue(MarkedColumnReduction &m) {
  Value out = m.op.getDpsInitOperand(0)->get();
  for (Operation *next = m.op->getNextNode(); next;
       next = next->getNextNode()) {
    if (!next->hasAttr(kEpilogueAttr))
      continue;
    auto ep = dyn_cast<linalg::LinalgOp>(next);
    auto uses = [&](OpOperand &operand) { return operand.get() == out; };
    auto isInput = [&](OpOperand *operand) { return uses(*operand); };
    if (!ep || !linalg::isElementwise(ep) || ep.getNumDpsInits() != 1 ||
        !ep.hasPureBufferSemantics() ||
        ep.getNumLoops() != cast<MemRefType>(out.getType()).getRank() ||
        !llvm::any_of(ep.getDpsInputOperands(), isInput) ||
        uses(*ep.getDpsInitOperand(0)) ||
        !ep.getMatchingIndexingMap(ep.getDpsInitOperand(0)).isIdentity() ||
        !out.getDefiningOp<memref::AllocOp>())
      return next->emitError("ke.colreduce.epilogue: not an elementwise "
                             "consumer of the reduction's temporary result");
    for (OpOperand &operand : ep->getOpOperands()) {
      AffineMap map = ep.getMatchingIndexingMap(&operand);
      if ((uses(operand) && !map.isIdentity()) ||
          !map.isProjectedPermutation(/*allowZeroInResults=*/true))
        return next->emitError("ke.colreduce.epilogue: operands must be "
                               "read through projected permutations, the "
                               "reduction's result through the identity");
    }
    m.epilogue = ep;
    return success();
  }
  return success();
}

FailureOr<MarkedColumnReduction> analyze(linalg::LinalgOp op) {
  auto knobs = op->getAttrOfType<DictionaryAttr>(kColumnReduceAttr);
  auto read = [&](StringRef name) {
    auto attr = knobs ? knobs.getAs<IntegerAttr>(name) : IntegerAttr();
    return attr ? attr.getInt() : int64_t(0);
  };
  MarkedColumnReduction m;
  m.op = op;
  m.threadsX = read("threads_x");
  m.threadsY = read("threads_y");
  m.unroll = read("unroll");
  if (m.threadsX < 1 || m.threadsY < 1 || m.unroll < 1 ||
      m.threadsX * m.threadsY > 1024)
    return op->emitError("ke.colreduce must be a dictionary of positive "
                         "'threads_x', 'threads_y' and 'unroll', with at "
                         "most 1024 threads");
  if (!op.hasPureBufferSemantics())
    return op->emitError("ke.colreduce: the reduction must be bufferized");
  std::optional<ColumnReduction> c = analyzeColumnReduction(op);
  if (!c)
    return op->emitError("ke.colreduce: not a reduction along a loop other "
                         "than the innermost, of the form combine(acc, "
                         "f(inputs)) with static loops and projected "
                         "permutation maps");
  m.c = *c;
  std::optional<TypedAttr> neutral =
      arith::getNeutralElement(m.c.combiner);
  if (!neutral)
    return op->emitError("ke.colreduce: the combiner has no neutral element");
  m.neutral = *neutral;
  if (failed(findEpilogue(m)))
    return failure();
  if (m.columnTiles() * m.c.batch > std::numeric_limits<int32_t>::max())
    return op->emitError("ke.colreduce: ")
           << m.columnTiles() * m.c.batch << " blocks exceed the grid";
  return m;
}

class ColumnReduceBuilder {
public:
  explicit ColumnReduceBuilder(const MarkedColumnReduction &marked)
      : m(marked), b(m.op->getLoc(), m.op.getOperation()) {}

  void build();

private:
  Value index(int64_t v) { return b.create<arith::ConstantIndexOp>(v); }
  /// `linear` as indices of the loops [first, last), the last fastest.
  void delinearize(Value linear, unsigned first, unsigned last);
  /// The op's body at this thread's loop indices and reduction index
  /// `row`, its accumulator `acc`.
  Value step(Value row, Value acc);
  /// The combiner applied to `lhs` and `rhs`.
  Value combine(Value lhs, Value rhs);
  /// The op's operand `operand`'s indices through its indexing map at
  /// this thread's loop indices.
  SmallVector<Value> operandIndices(OpOperand &operand);
  /// Stores the combined `value` of this thread's column: through the
  /// epilogue, if any, else into the op's output.
  void storeResult(Value value);

  MarkedColumnReduction m;
  ImplicitLocOpBuilder b;
  /// The loop indices of the current thread (the reduction loop's set by
  /// step).
  SmallVector<Value> loops;
};

void ColumnReduceBuilder::delinearize(Value linear, unsigned first,
                                      unsigned last) {
  for (unsigned loop = last; loop-- > first;) {
    int64_t range = m.c.ranges[loop];
    loops[loop] = b.create<arith::RemUIOp>(linear, index(range));
    linear = b.create<arith::DivUIOp>(linear, index(range));
  }
}

SmallVector<Value> ColumnReduceBuilder::operandIndices(OpOperand &operand) {
  SmallVector<Value> indices;
  for (AffineExpr e : m.op.getMatchingIndexingMap(&operand).getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(e))
      indices.push_back(loops[dim.getPosition()]);
    else
      indices.push_back(index(0)); // a kept dimension of extent 1
  }
  return indices;
}

Value ColumnReduceBuilder::step(Value row, Value acc) {
  loops[m.c.reductionLoop] = row;
  OpOperand *init = m.op.getDpsInitOperand(0);
  return applyLinalgBody(b, m.op, loops, [&](OpOperand &operand) {
    return &operand == init ? acc : Value();
  });
}

Value ColumnReduceBuilder::combine(Value lhs, Value rhs) {
  IRMapping mapping;
  mapping.map(m.c.combiner->getOperand(0), lhs);
  mapping.map(m.c.combiner->getOperand(1), rhs);
  return b.clone(*m.c.combiner, mapping)->getResult(0);
}

void ColumnReduceBuilder::storeResult(Value value) {
  OpOperand *init = m.op.getDpsInitOperand(0);
  SmallVector<Value> outIndices = operandIndices(*init);
  if (!m.epilogue) {
    b.create<memref::StoreOp>(value, init->get(), outIndices);
    return;
  }
  // The epilogue's loops are the output's dimensions.
  Value result = applyLinalgBody(
      b, m.epilogue, outIndices, [&](OpOperand &operand) {
        return operand.get() == init->get() ? value : Value();
      });
  b.create<memref::StoreOp>(result, m.epilogue.getDpsInitOperand(0)->get(),
                            outIndices);
}

void ColumnReduceBuilder::build() {
  Value out = m.op.getDpsInitOperand(0)->get();
  Type element = getElementTypeOrSelf(out.getType());
  // The init: the fill right before the op (which goes), else the output.
  linalg::FillOp fill = findFillBefore(m.op, out);
  Value fillValue = fill ? fill.getInputs()[0] : Value();

  auto launch = b.create<gpu::LaunchOp>(
      index(m.columnTiles() * m.c.batch), index(1), index(1),
      index(m.threadsX), index(m.threadsY), index(1));
  Block &launchBody = launch.getBody().front();
  b.setInsertionPointToStart(&launchBody);
  b.create<gpu::TerminatorOp>();
  b.setInsertionPointToStart(&launchBody);

  unsigned n = m.c.ranges.size(), r = m.c.reductionLoop;
  loops.assign(n, Value());
  Value block = launch.getBlockIds().x;
  Value x = launch.getThreadIds().x, y = launch.getThreadIds().y;
  Value tile = b.create<arith::RemUIOp>(block, index(m.columnTiles()));
  delinearize(b.create<arith::DivUIOp>(block, index(m.columnTiles())), 0, r);
  Value column = b.create<arith::AddIOp>(
      b.create<arith::MulIOp>(tile, index(m.threadsX)), x);
  delinearize(column, r + 1, n);
  Value inside;
  if (m.c.columns % m.threadsX)
    inside = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, column,
                                     index(m.c.columns));

  // This thread's partial result: whole steps of threads_y * unroll rows,
  // then the rows past them one at a time (outside: the neutral element).
  Value neutral = b.create<arith::ConstantOp>(m.neutral);
  auto accumulate = [&]() -> Value {
    int64_t stride = m.threadsY * m.unroll;
    int64_t whole = m.c.rows / stride * stride;
    Value acc = neutral;
    if (whole > 0) {
      auto loop = b.create<scf::ForOp>(
          b.create<arith::MulIOp>(y, index(m.unroll)), index(whole),
          index(stride), ValueRange{acc});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value sum = loop.getRegionIterArgs()[0];
      for (int64_t j = 0; j < m.unroll; ++j)
        sum = step(b.create<arith::AddIOp>(loop.getInductionVar(), index(j)),
                   sum);
      b.create<scf::YieldOp>(sum);
      acc = loop.getResult(0);
    }
    if (whole < m.c.rows) {
      auto loop = b.create<scf::ForOp>(b.create<arith::AddIOp>(y, index(whole)),
                                       index(m.c.rows), index(m.threadsY),
                                       ValueRange{acc});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      b.create<scf::YieldOp>(
          step(loop.getInductionVar(), loop.getRegionIterArgs()[0]));
      acc = loop.getResult(0);
    }
    return acc;
  };
  Value partial;
  if (inside) {
    auto guard = b.create<scf::IfOp>(TypeRange{element}, inside,
                                     /*withElseRegion=*/true);
    b.setInsertionPointToStart(guard.thenBlock());
    b.create<scf::YieldOp>(accumulate());
    b.setInsertionPointToStart(guard.elseBlock());
    b.create<scf::YieldOp>(neutral);
    b.setInsertionPointAfter(guard);
    partial = guard.getResult(0);
  } else {
    partial = accumulate();
  }

  // Thread (x, 0) combines the partial results in order of y, then the
  // init, and stores the result.
  Value shared;
  if (m.threadsY > 1) {
    auto workgroup = gpu::AddressSpaceAttr::get(
        b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
    shared = b.create<memref::AllocOp>(MemRefType::get(
        {m.threadsY, m.threadsX}, element, AffineMap(), workgroup));
    b.create<memref::StoreOp>(partial, shared, ValueRange{y, x});
    b.create<gpu::BarrierOp>();
  }
  Value first = b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, y, index(0));
  Value stores = inside ? b.create<arith::AndIOp>(first, inside).getResult()
                        : first;
  auto storeIf = b.create<scf::IfOp>(stores, /*withElseRegion=*/false);
  b.setInsertionPointToStart(storeIf.thenBlock());
  Value total = partial;
  for (int64_t j = 1; j < m.threadsY; ++j)
    total = combine(total, b.create<memref::LoadOp>(
                               shared, ValueRange{index(j), x}));
  Value initValue =
      fillValue ? fillValue
                : b.create<memref::LoadOp>(
                       out, operandIndices(*m.op.getDpsInitOperand(0)))
                      .getResult();
  storeResult(combine(initValue, total));
  m.op->erase();
  if (fill)
    fill->erase();
  if (m.epilogue) {
    m.epilogue->erase();
    // The epilogue's input, now never written or read where the fill gave
    // the init; otherwise the kernel reads its init from it, and it stays
    // with whatever wrote it.
    if (fill) {
      Operation *temporary = out.getDefiningOp();
      for (Operation *user :
           llvm::make_early_inc_range(temporary->getUsers()))
        user->erase();
      temporary->erase();
    }
  }
}

struct GpuColumnReducePass final
    : ke::impl::GpuColumnReducePassBase<GpuColumnReducePass> {
  void runOnOperation() override {
    for (linalg::LinalgOp op :
         collectMarked<linalg::LinalgOp>(getOperation(), kColumnReduceAttr)) {
      FailureOr<MarkedColumnReduction> c = analyze(op);
      if (failed(c))
        return signalPassFailure();
      ColumnReduceBuilder(*c).build();
    }
  }
};

} // namespace

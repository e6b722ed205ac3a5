//===- GpuRowSoftmax.cpp - Softmax kernels for rows of any length ---------===//
//
// ke-gpu-row-softmax (ke/Codegen/Passes.td). The gpu.softmax sketch
// (lib/Sketch/GpuSoftmaxRule.cpp) bufferizes a linalg.softmax over the last
// dimension whose rows its tiled schedule cannot take (a length no warp
// multiple divides: 1000, 197, 50257, 7; 16-bit rows) and marks it
// `ke.softmax = {row_threads, rows, vec, warp}`; here it becomes one kernel:
//
//   rows       the leading dimensions as one: R rows of C elements
//   grid       ceil(R / rows) blocks along x, each `rows` rows of
//              `row_threads` threads (row_threads * rows threads)
//   pass 1     each thread reads its vectors of `vec` elements at columns
//              (k * row_threads + lane) * vec, k = 0 .. ceil(C / (row_threads
//              * vec)) - 1 (consecutive threads, consecutive vectors: the
//              loads coalesce), skipping those past the row, and keeps an
//              online maximum m and sum s of exp(x - m) (s rescaled by
//              exp(m_old - m_new) when m grows): one read of the row
//   combine    (m, s) pairs of the row's threads: xor shuffles within a
//              warp, then, for rows wider than a warp, each warp's pair in
//              shared memory, combined by every thread after a barrier
//   pass 2     exp(x - m) / s stored for the same vectors (the second read
//              of the row mostly hits L1/L2)
//
// Every value is computed in f32 (f64 for f64 rows) and rounded once when
// stored: 16-bit rows are summed as PyTorch sums them, not in 16 bits.
// `vec` divides C, so a vector is either wholly inside the row or wholly
// past it and no load is partial. A thread whose vectors all lie past the
// row keeps (lowest, 0), which every combine leaves unchanged.
//
//===----------------------------------------------------------------------===//

#include "GpuGemmKernel.h"

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace ke;

namespace ke {
#define GEN_PASS_DEF_GPUROWSOFTMAXPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

constexpr llvm::StringLiteral kMark = "ke.softmax";

/// A marked softmax as rows, with its knobs.
struct RowSoftmax {
  linalg::SoftmaxOp op;
  int64_t rows = 0, cols = 0;
  int64_t rowThreads = 1, rowsPerBlock = 1, vec = 1, warp = 32;
  FloatType element, compute;

  int64_t blockThreads() const { return rowThreads * rowsPerBlock; }
  int64_t blocks() const { return llvm::divideCeil(rows, rowsPerBlock); }
  /// Vectors per thread in each pass.
  int64_t steps() const { return llvm::divideCeil(cols, rowThreads * vec); }
};

/// Reads the mark and checks what the kernel assumes; a located error
/// otherwise.
FailureOr<RowSoftmax> analyze(linalg::SoftmaxOp op) {
  auto fail = [&](const Twine &why) {
    return op->emitError() << kMark << ": " << why;
  };
  auto knobs = op->getAttrOfType<DictionaryAttr>(kMark);
  if (!knobs)
    return fail("the mark is not a dictionary");
  RowSoftmax s;
  s.op = op;
  int64_t *fields[] = {&s.rowThreads, &s.rowsPerBlock, &s.vec, &s.warp};
  const char *names[] = {"row_threads", "rows", "vec", "warp"};
  for (auto [field, name] : llvm::zip(fields, names)) {
    FailureOr<int64_t> v = readIntegerKnob(op, knobs, kMark, name);
    if (failed(v))
      return failure();
    *field = *v;
  }
  auto input = dyn_cast<MemRefType>(op.getInput().getType());
  auto output = dyn_cast<MemRefType>(op.getOutput().getType());
  if (!input || !output || input != output)
    return fail("expects a bufferized softmax with one memref type for its "
                "input and output");
  if (!input.hasStaticShape() || !input.getLayout().isIdentity())
    return fail("expects static, contiguous rows");
  if (op.getDimension() + 1 != uint64_t(input.getRank()))
    return fail("expects the softmax over the last dimension");
  s.element = dyn_cast<FloatType>(input.getElementType());
  if (!s.element)
    return fail("expects float rows");
  s.compute = s.element.getWidth() > 32 ? s.element
                                        : Float32Type::get(op->getContext());
  s.cols = input.getShape().back();
  s.rows = input.getNumElements() / std::max<int64_t>(s.cols, 1);
  auto isPow2 = [](int64_t v) { return v > 0 && llvm::isPowerOf2_64(v); };
  if (!isPow2(s.rowThreads) || !isPow2(s.rowsPerBlock) || !isPow2(s.vec) ||
      !isPow2(s.warp))
    return fail("row_threads, rows, vec and warp must be powers of two");
  if (s.cols % s.vec != 0)
    return fail("vec must divide the row");
  // The shuffles name every lane of the warp.
  if (s.blockThreads() % s.warp != 0)
    return fail("a block must be whole warps");
  if (s.rows == 0 || s.cols == 0)
    return fail("expects a non-empty softmax");
  return s;
}

class RowSoftmaxBuilder {
public:
  explicit RowSoftmaxBuilder(RowSoftmax softmax)
      : s(softmax), b(s.op->getLoc(), s.op.getOperation()) {}

  void build();

private:
  Value index(int64_t v) { return b.create<arith::ConstantIndexOp>(v); }
  Value constant(double v) {
    return b.create<arith::ConstantOp>(s.compute,
                                       b.getFloatAttr(s.compute, v));
  }
  /// The rows as a 2-D R x C memref.
  Value asRows(Value memref);
  /// Whether this thread's vector `step` lies inside its row (null: always).
  Value inside(Value column);
  /// The thread's vector `step` of its row, in the compute type.
  Value load(Value column);
  /// (m, s) combined with (m2, s2).
  std::pair<Value, Value> combine(Value m, Value sum, Value m2, Value sum2);
  /// The row's (m, s) from every thread's: shuffles, then shared memory.
  std::pair<Value, Value> combineRow(Value m, Value sum);

  RowSoftmax s;
  ImplicitLocOpBuilder b;
  Value input, output, row, lane, rowInBlock, rowInside;
};

Value RowSoftmaxBuilder::asRows(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() == 2)
    return memref;
  SmallVector<ReassociationIndices> groups(2);
  for (int64_t d = 0; d + 1 < type.getRank(); ++d)
    groups[0].push_back(d);
  groups[1].push_back(type.getRank() - 1);
  if (type.getRank() == 1) // one row
    return b.create<memref::ExpandShapeOp>(
        MemRefType::get({1, s.cols}, type.getElementType()), memref,
        ArrayRef<ReassociationIndices>{{0, 1}});
  return b.create<memref::CollapseShapeOp>(memref, groups);
}

Value RowSoftmaxBuilder::inside(Value column) {
  Value result = rowInside;
  if (s.cols % (s.rowThreads * s.vec) != 0) {
    Value columnInside = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult,
                                                 column, index(s.cols));
    result = result ? b.create<arith::AndIOp>(result, columnInside)
                    : columnInside;
  }
  return result;
}

Value RowSoftmaxBuilder::load(Value column) {
  auto vectorType = VectorType::get({s.vec}, s.element);
  Value v = b.create<vector::LoadOp>(vectorType, input,
                                     ValueRange{row, column});
  if (s.element != s.compute)
    v = b.create<arith::ExtFOp>(VectorType::get({s.vec}, s.compute), v);
  return v;
}

std::pair<Value, Value> RowSoftmaxBuilder::combine(Value m, Value sum,
                                                   Value m2, Value sum2) {
  Value top = b.create<arith::MaximumFOp>(m, m2);
  Value scaled = b.create<arith::MulFOp>(
      sum, b.create<math::ExpOp>(b.create<arith::SubFOp>(m, top)));
  Value scaled2 = b.create<arith::MulFOp>(
      sum2, b.create<math::ExpOp>(b.create<arith::SubFOp>(m2, top)));
  return {top, b.create<arith::AddFOp>(scaled, scaled2)};
}

std::pair<Value, Value> RowSoftmaxBuilder::combineRow(Value m, Value sum) {
  // Within a warp: lanes l and l ^ offset belong to one row for every
  // offset below the row's threads (rows are aligned groups of lanes).
  int64_t inWarp = std::min(s.rowThreads, s.warp);
  auto shuffle = [&](Value v, int64_t offset) {
    return b
        .create<gpu::ShuffleOp>(v, int32_t(offset), int32_t(s.warp),
                                gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  for (int64_t offset = inWarp / 2; offset >= 1; offset /= 2)
    std::tie(m, sum) = combine(m, sum, shuffle(m, offset), shuffle(sum, offset));
  if (s.rowThreads <= s.warp)
    return {m, sum};

  // Across the row's warps: each warp's first lane stores the warp's pair,
  // every thread combines the row's pairs after a barrier.
  int64_t warpsPerRow = s.rowThreads / s.warp;
  MLIRContext *ctx = b.getContext();
  auto workgroup = gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
  auto pairsType = MemRefType::get({s.rowsPerBlock, warpsPerRow}, s.compute,
                                   AffineMap(), workgroup);
  Value ms = b.create<memref::AllocOp>(pairsType);
  Value sums = b.create<memref::AllocOp>(pairsType);
  Value warpInRow = b.create<arith::DivUIOp>(lane, index(s.warp));
  Value first = b.create<arith::CmpIOp>(
      arith::CmpIPredicate::eq,
      b.create<arith::RemUIOp>(lane, index(s.warp)), index(0));
  b.create<scf::IfOp>(first, [&](OpBuilder &nested, Location loc) {
    memref::StoreOp::create(nested, loc, m, ms,
                            ValueRange{rowInBlock, warpInRow});
    memref::StoreOp::create(nested, loc, sum, sums,
                            ValueRange{rowInBlock, warpInRow});
    scf::YieldOp::create(nested, loc);
  });
  b.create<gpu::BarrierOp>();
  m = b.create<memref::LoadOp>(ms, ValueRange{rowInBlock, index(0)});
  sum = b.create<memref::LoadOp>(sums, ValueRange{rowInBlock, index(0)});
  for (int64_t w = 1; w < warpsPerRow; ++w)
    std::tie(m, sum) =
        combine(m, sum, b.create<memref::LoadOp>(ms, ValueRange{rowInBlock, index(w)}),
                b.create<memref::LoadOp>(sums, ValueRange{rowInBlock, index(w)}));
  return {m, sum};
}

void RowSoftmaxBuilder::build() {
  auto launch = b.create<gpu::LaunchOp>(index(s.blocks()), index(1), index(1),
                                        index(s.blockThreads()), index(1),
                                        index(1));
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  b.create<gpu::TerminatorOp>();
  b.setInsertionPointToStart(&body);

  // Views made inside the launch, so that outlining passes the memrefs.
  input = asRows(s.op.getInput());
  output = asRows(s.op.getOutput());
  Value thread = launch.getThreadIds().x;
  lane = b.create<arith::RemUIOp>(thread, index(s.rowThreads));
  rowInBlock = b.create<arith::DivUIOp>(thread, index(s.rowThreads));
  row = b.create<arith::AddIOp>(
      b.create<arith::MulIOp>(launch.getBlockIds().x, index(s.rowsPerBlock)),
      rowInBlock);
  if (s.rows % s.rowsPerBlock != 0)
    rowInside = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, row,
                                        index(s.rows));
  auto columnOf = [&](Value step) {
    return b.create<arith::MulIOp>(
        b.create<arith::AddIOp>(
            b.create<arith::MulIOp>(step, index(s.rowThreads)), lane),
        index(s.vec));
  };
  auto vectorType = VectorType::get({s.vec}, s.compute);

  // Pass 1: the thread's online maximum and sum.
  const llvm::fltSemantics &semantics = s.compute.getFloatSemantics();
  Value lowest = b.create<arith::ConstantOp>(
      s.compute,
      b.getFloatAttr(s.compute, llvm::APFloat::getLargest(semantics, true)));
  auto pass1 = b.create<scf::ForOp>(index(0), index(s.steps()), index(1),
                                    ValueRange{lowest, constant(0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(pass1.getBody());
    Value m = pass1.getRegionIterArgs()[0];
    Value sum = pass1.getRegionIterArgs()[1];
    Value column = columnOf(pass1.getInductionVar());
    auto update = [&]() -> SmallVector<Value> {
      Value x = load(column);
      Value top = b.create<arith::MaximumFOp>(
          m, b.create<vector::ReductionOp>(vector::CombiningKind::MAXIMUMF, x));
      Value exps = b.create<math::ExpOp>(b.create<arith::SubFOp>(
          x, b.create<vector::BroadcastOp>(vectorType, top)));
      Value added = b.create<vector::ReductionOp>(vector::CombiningKind::ADD,
                                                  exps);
      Value rescaled = b.create<arith::MulFOp>(
          sum, b.create<math::ExpOp>(b.create<arith::SubFOp>(m, top)));
      return {top, b.create<arith::AddFOp>(rescaled, added)};
    };
    SmallVector<Value> next;
    if (Value in = inside(column)) {
      auto ifOp = b.create<scf::IfOp>(TypeRange{s.compute, s.compute}, in,
                                      /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        b.create<scf::YieldOp>(update());
        b.setInsertionPointToStart(ifOp.elseBlock());
        b.create<scf::YieldOp>(ValueRange{m, sum});
      }
      next.assign(ifOp.getResults().begin(), ifOp.getResults().end());
    } else {
      next = update();
    }
    b.create<scf::YieldOp>(next);
  }
  Value m, sum;
  std::tie(m, sum) = combineRow(pass1.getResult(0), pass1.getResult(1));
  Value inverse = b.create<arith::DivFOp>(constant(1), sum);

  // Pass 2: the normalized row.
  auto pass2 = b.create<scf::ForOp>(index(0), index(s.steps()), index(1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(pass2.getBody());
    Value column = columnOf(pass2.getInductionVar());
    auto store = [&]() {
      Value x = load(column);
      Value y = b.create<arith::MulFOp>(
          b.create<math::ExpOp>(b.create<arith::SubFOp>(
              x, b.create<vector::BroadcastOp>(vectorType, m))),
          b.create<vector::BroadcastOp>(vectorType, inverse));
      if (s.element != s.compute)
        y = b.create<arith::TruncFOp>(VectorType::get({s.vec}, s.element), y);
      b.create<vector::StoreOp>(y, output, ValueRange{row, column});
    };
    if (Value in = inside(column)) {
      auto ifOp = b.create<scf::IfOp>(in, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      store();
    } else {
      store();
    }
  }
  s.op->erase();
}

struct GpuRowSoftmaxPass final
    : ke::impl::GpuRowSoftmaxPassBase<GpuRowSoftmaxPass> {
  void runOnOperation() override {
    SmallVector<linalg::SoftmaxOp> marked;
    getOperation()->walk([&](linalg::SoftmaxOp op) {
      if (op->hasAttr(kMark))
        marked.push_back(op);
    });
    for (linalg::SoftmaxOp op : marked) {
      FailureOr<RowSoftmax> s = analyze(op);
      if (failed(s))
        return signalPassFailure();
      RowSoftmaxBuilder(*s).build();
    }
  }
};

} // namespace

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

#include "GpuRowKernel.h"

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace ke;

namespace ke {
#define GEN_PASS_DEF_GPUROWSOFTMAXPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

constexpr llvm::StringLiteral kMark = "ke.softmax";

/// A marked softmax: its rows and its types.
struct RowSoftmax {
  linalg::SoftmaxOp op;
  RowGeometry geometry;
  FloatType element, compute;
};

/// Reads the mark and checks what the kernel assumes; a located error
/// otherwise.
FailureOr<RowSoftmax> analyze(linalg::SoftmaxOp op) {
  auto fail = [&](const Twine &why) {
    return op->emitError() << kMark << ": " << why;
  };
  auto input = dyn_cast<MemRefType>(op.getInput().getType());
  auto output = dyn_cast<MemRefType>(op.getOutput().getType());
  if (!input || !output || input != output)
    return fail("expects a bufferized softmax with one memref type for its "
                "input and output");
  if (!input.hasStaticShape() || !input.getLayout().isIdentity())
    return fail("expects static, contiguous rows");
  if (op.getDimension() + 1 != uint64_t(input.getRank()))
    return fail("expects the softmax over the last dimension");
  RowSoftmax s;
  s.op = op;
  s.element = dyn_cast<FloatType>(input.getElementType());
  if (!s.element)
    return fail("expects float rows");
  s.compute = s.element.getWidth() > 32 ? s.element
                                        : Float32Type::get(op->getContext());
  int64_t cols = input.getShape().back();
  FailureOr<RowGeometry> geometry = readRowGeometry(
      op, kMark, cols ? input.getNumElements() / cols : 0, cols);
  if (failed(geometry))
    return failure();
  s.geometry = *geometry;
  return s;
}

class RowSoftmaxBuilder : RowKernelBuilder {
public:
  explicit RowSoftmaxBuilder(RowSoftmax softmax)
      : RowKernelBuilder(softmax.op, softmax.geometry), s(softmax) {}

  void build();

private:
  Value constant(double v) {
    return b.create<arith::ConstantOp>(s.compute,
                                       b.getFloatAttr(s.compute, v));
  }
  /// The vector of this thread's row at `column`, in the compute type.
  Value load(Value column);
  /// (m, s) combined with (m2, s2): the larger maximum, each sum rescaled
  /// to it.
  SmallVector<Value> combine(ValueRange a, ValueRange other);

  RowSoftmax s;
  Value input, output;
};

Value RowSoftmaxBuilder::load(Value column) {
  auto vectorType = VectorType::get({g.vec}, s.element);
  Value v = b.create<vector::LoadOp>(vectorType, input,
                                     ValueRange{row, column});
  if (s.element != s.compute)
    v = b.create<arith::ExtFOp>(VectorType::get({g.vec}, s.compute), v);
  return v;
}

SmallVector<Value> RowSoftmaxBuilder::combine(ValueRange a, ValueRange other) {
  Value m = a[0], sum = a[1], m2 = other[0], sum2 = other[1];
  Value top = b.create<arith::MaximumFOp>(m, m2);
  Value scaled = b.create<arith::MulFOp>(
      sum, b.create<math::ExpOp>(b.create<arith::SubFOp>(m, top)));
  Value scaled2 = b.create<arith::MulFOp>(
      sum2, b.create<math::ExpOp>(b.create<arith::SubFOp>(m2, top)));
  return {top, b.create<arith::AddFOp>(scaled, scaled2)};
}

void RowSoftmaxBuilder::build() {
  beginLaunch();
  // Views made inside the launch, so that outlining passes the memrefs.
  input = asRows(s.op.getInput());
  output = asRows(s.op.getOutput());
  auto vectorType = VectorType::get({g.vec}, s.compute);

  // Pass 1: the thread's online maximum and sum.
  const llvm::fltSemantics &semantics = s.compute.getFloatSemantics();
  Value lowest = b.create<arith::ConstantOp>(
      s.compute,
      b.getFloatAttr(s.compute, llvm::APFloat::getLargest(semantics, true)));
  SmallVector<Value> partial = forEachVector(
      {lowest, constant(0)}, [&](Value column, ValueRange carried) {
        Value m = carried[0], sum = carried[1];
        Value x = load(column);
        Value top = b.create<arith::MaximumFOp>(
            m,
            b.create<vector::ReductionOp>(vector::CombiningKind::MAXIMUMF, x));
        Value exps = b.create<math::ExpOp>(b.create<arith::SubFOp>(
            x, b.create<vector::BroadcastOp>(vectorType, top)));
        Value added =
            b.create<vector::ReductionOp>(vector::CombiningKind::ADD, exps);
        Value rescaled = b.create<arith::MulFOp>(
            sum, b.create<math::ExpOp>(b.create<arith::SubFOp>(m, top)));
        return SmallVector<Value>{top, b.create<arith::AddFOp>(rescaled, added)};
      });
  SmallVector<Value> rowResult =
      combineRow(partial, [&](ValueRange a, ValueRange other) {
        return combine(a, other);
      });
  Value m = rowResult[0];
  Value inverse = b.create<arith::DivFOp>(constant(1), rowResult[1]);

  // Pass 2: the normalized row.
  forEachVector({}, [&](Value column, ValueRange) {
    Value x = load(column);
    Value y = b.create<arith::MulFOp>(
        b.create<math::ExpOp>(b.create<arith::SubFOp>(
            x, b.create<vector::BroadcastOp>(vectorType, m))),
        b.create<vector::BroadcastOp>(vectorType, inverse));
    if (s.element != s.compute)
      y = b.create<arith::TruncFOp>(VectorType::get({g.vec}, s.element), y);
    b.create<vector::StoreOp>(y, output, ValueRange{row, column});
    return SmallVector<Value>{};
  });
  s.op->erase();
}

struct GpuRowSoftmaxPass final
    : ke::impl::GpuRowSoftmaxPassBase<GpuRowSoftmaxPass> {
  void runOnOperation() override {
    for (linalg::SoftmaxOp op : collectMarked<linalg::SoftmaxOp>(getOperation(), kMark)) {
      FailureOr<RowSoftmax> s = analyze(op);
      if (failed(s))
        return signalPassFailure();
      RowSoftmaxBuilder(*s).build();
    }
  }
};

} // namespace

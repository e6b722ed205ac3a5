//===- Cost.cpp - Flops and bytes of a workload ---------------------------===//
//
// Conventions (docs/workloads.md):
// - flops = iterations of the loop nest x computing ops in the body. Constants,
//   type conversions, linalg.index and the terminator are free; every other
//   arith/math op counts 1, so matmul is 2*M*N*K, as BLAS counts it.
// - linalg.softmax counts 5 per element: max, subtract, exp, sum, divide.
// - bytes: each operand whose value the body uses is read once (all inputs
//   but pooling windows, which only give a shape; inits that accumulate),
//   each result is written once. Scalars count their own size.
//
//===----------------------------------------------------------------------===//

#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/CastInterfaces.h"

using namespace mlir;
using namespace ke;

namespace {

/// Multiplies into `acc`; false on overflow.
bool mulInto(uint64_t &acc, uint64_t factor) {
  return !__builtin_mul_overflow(acc, factor, &acc);
}

/// Bytes of one element; std::nullopt for types with no defined size.
std::optional<uint64_t> elementBytes(Type type) {
  if (type.isIntOrFloat())
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  if (isa<IndexType>(type))
    return 8; // the 64-bit hosts and GPUs ke targets
  if (auto complex = dyn_cast<ComplexType>(type)) {
    std::optional<uint64_t> part = elementBytes(complex.getElementType());
    return part ? std::optional<uint64_t>(2 * *part) : std::nullopt;
  }
  return std::nullopt;
}

/// Bytes of a whole operand value; std::nullopt for dynamic shapes.
std::optional<uint64_t> valueBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return elementBytes(type);
  if (!shaped.hasStaticShape())
    return std::nullopt;
  std::optional<uint64_t> bytes = elementBytes(shaped.getElementType());
  if (!bytes)
    return std::nullopt;
  uint64_t total = *bytes;
  for (int64_t dim : shaped.getShape())
    if (!mulInto(total, dim))
      return std::nullopt;
  return total;
}

bool isFreeOp(Operation &op) {
  return op.hasTrait<OpTrait::IsTerminator>() ||
         op.hasTrait<OpTrait::ConstantLike>() || isa<linalg::IndexOp>(op) ||
         isa<CastOpInterface>(op);
}

} // namespace

std::optional<uint64_t> ke::countFlops(Operation *anchor) {
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(anchor)) {
    auto type = cast<ShapedType>(softmax.getInput().getType());
    if (!type.hasStaticShape())
      return std::nullopt;
    uint64_t flops = 5;
    for (int64_t dim : type.getShape())
      if (!mulInto(flops, dim))
        return std::nullopt;
    return flops;
  }
  auto linalgOp = cast<linalg::LinalgOp>(anchor);
  uint64_t perIteration = 0;
  linalgOp.getBlock()->walk([&](Operation *op) {
    if (!isFreeOp(*op))
      ++perIteration;
  });
  uint64_t flops = perIteration;
  for (int64_t range : linalgOp.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    if (!mulInto(flops, range))
      return std::nullopt;
  }
  return flops;
}

std::optional<ByteCounts> ke::countBytes(Operation *anchor) {
  auto dps = cast<DestinationStyleOpInterface>(anchor);
  auto linalgOp = dyn_cast<linalg::LinalgOp>(anchor);
  ByteCounts counts;
  for (OpOperand &operand : anchor->getOpOperands()) {
    std::optional<uint64_t> bytes = valueBytes(operand.get().getType());
    if (!bytes)
      return std::nullopt;
    bool isInit = dps.isDpsInit(&operand);
    if (isInit)
      counts.written += *bytes;
    // An operand is read when the computation uses its value: every input
    // except pooling's shape-only window, and inits that accumulate (matmul's
    // C, a reduction's init) but not those that only name the destination
    // (tensor.empty, softmax's out).
    bool isRead = linalgOp ? linalgOp.payloadUsesValueFromOperand(&operand)
                           : !isInit;
    if (isRead)
      counts.read += *bytes;
  }
  return counts;
}

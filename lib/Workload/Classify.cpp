//===- Classify.cpp - Which ops are workloads, and of what kind -----------===//

#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

using namespace mlir;
using namespace ke;

llvm::StringRef ke::stringifyWorkloadKind(WorkloadKind kind) {
  switch (kind) {
  case WorkloadKind::Contraction:
    return "contraction";
  case WorkloadKind::Convolution:
    return "convolution";
  case WorkloadKind::Pooling:
    return "pooling";
  case WorkloadKind::Reduction:
    return "reduction";
  case WorkloadKind::Softmax:
    return "softmax";
  case WorkloadKind::Elementwise:
    return "elementwise";
  case WorkloadKind::Fill:
    return "fill";
  case WorkloadKind::DataMovement:
    return "data-movement";
  }
  llvm_unreachable("unknown workload kind");
}

bool ke::isWorkloadAnchor(Operation *op) {
  return isa<linalg::LinalgOp, linalg::SoftmaxOp>(op);
}

WorkloadKind ke::classifyWorkload(Operation *op) {
  if (isa<linalg::SoftmaxOp>(op))
    return WorkloadKind::Softmax;
  if (isa<linalg::FillOp>(op))
    return WorkloadKind::Fill;
  auto linalgOp = cast<linalg::LinalgOp>(op);
  // Pooling ops also match the convolution interface; the name tells them
  // apart (their "filter" operand is only a window shape).
  if (op->getName().getStringRef().starts_with("linalg.pooling_"))
    return WorkloadKind::Pooling;
  if (linalg::isaContractionOpInterface(linalgOp))
    return WorkloadKind::Contraction;
  if (linalg::isaConvolutionOpInterface(linalgOp))
    return WorkloadKind::Convolution;
  if (linalgOp.getNumReductionLoops() > 0)
    return WorkloadKind::Reduction;
  Block *body = linalgOp.getBlock();
  if (body && llvm::hasSingleElement(body->getOperations()))
    return WorkloadKind::DataMovement; // only the terminator: copies data
  return WorkloadKind::Elementwise;
}

//===- LinalgBody.cpp - A linalg op's body at given loop indices ----------===//

#include "LinalgBody.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

Value ke::applyLinalgBody(ImplicitLocOpBuilder &b, linalg::LinalgOp op,
                          ValueRange loops,
                          llvm::function_ref<Value(OpOperand &)> bound) {
  Block *body = op.getBlock();
  IRMapping mapping;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = body->getArgument(operand.getOperandNumber());
    if (arg.use_empty())
      continue;
    if (Value value = bound(operand)) {
      mapping.map(arg, value);
      continue;
    }
    if (!isa<MemRefType>(operand.get().getType())) {
      mapping.map(arg, operand.get());
      continue;
    }
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<Value> indices;
    for (AffineExpr expr : map.getResults())
      indices.push_back(b.create<affine::AffineApplyOp>(
          AffineMap::get(map.getNumDims(), 0, expr), loops));
    mapping.map(arg, b.create<memref::LoadOp>(operand.get(), indices));
  }
  for (Operation &inner : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), loops[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  return mapping.lookupOrDefault(body->getTerminator()->getOperand(0));
}

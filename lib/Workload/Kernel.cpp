//===- Kernel.cpp - A workload as a standalone, callable function ---------===//

#include "ke/Workload/Kernel.h"
#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace ke;

int64_t KernelArgument::numElements() const {
  int64_t n = 1;
  for (int64_t dim : shape)
    n *= dim;
  return n;
}

FailureOr<KernelModule> ke::buildKernelModule(Operation *anchor) {
  MLIRContext *context = anchor->getContext();
  context->loadDialect<func::FuncDialect, bufferization::BufferizationDialect,
                       linalg::LinalgDialect>();
  auto dps = dyn_cast<DestinationStyleOpInterface>(anchor);
  if (!dps || !isWorkloadAnchor(anchor))
    return anchor->emitError("not a workload anchor");
  auto linalgOp = dyn_cast<linalg::LinalgOp>(anchor);

  // Decide the arguments: every shaped operand becomes a memref argument.
  KernelModule kernel;
  SmallVector<Type> argTypes;
  SmallVector<OpOperand *> shapedOperands;
  for (OpOperand &operand : anchor->getOpOperands()) {
    auto shaped = dyn_cast<ShapedType>(operand.get().getType());
    if (!shaped) {
      if (!matchPattern(operand.get(), m_Constant()))
        return anchor->emitError("operand #")
               << operand.getOperandNumber()
               << " is a scalar that is not a constant; kernels take buffers "
                  "only";
      continue;
    }
    if (!shaped.hasStaticShape())
      return anchor->emitError("operand #")
             << operand.getOperandNumber()
             << " has a dynamic shape; kernels need static shapes";
    KernelArgument arg;
    arg.shape.assign(shaped.getShape().begin(), shaped.getShape().end());
    arg.elementType = shaped.getElementType();
    if (dps.isDpsInit(&operand))
      arg.role = linalgOp && linalgOp.payloadUsesValueFromOperand(&operand)
                     ? BufferRole::Accumulator
                     : BufferRole::Output;
    kernel.arguments.push_back(arg);
    argTypes.push_back(MemRefType::get(arg.shape, arg.elementType));
    shapedOperands.push_back(&operand);
  }

  OpBuilder builder(context);
  Location loc = anchor->getLoc();
  kernel.module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(kernel.module->getBody());
  auto func = func::FuncOp::create(builder, loc, kKernelFunctionName,
                                   builder.getFunctionType(argTypes, {}));
  func->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);

  IRMapping mapping;
  for (auto [index, operand] : llvm::enumerate(shapedOperands)) {
    Value arg = body->getArgument(index);
    Value value = operand->get();
    if (auto tensorType = dyn_cast<RankedTensorType>(value.getType())) {
      bool writable = dps.isDpsInit(operand);
      auto toTensor = bufferization::ToTensorOp::create(
          builder, loc, tensorType, arg, /*restrict=*/true, writable);
      value = toTensor.getResult();
      mapping.map(operand->get(), value);
    } else {
      mapping.map(operand->get(), arg);
    }
  }
  // Constants the anchor uses, as scalar operands or inside its body, travel
  // with it.
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(anchor->getRegions(), captured);
  for (OpOperand &operand : anchor->getOpOperands())
    if (!isa<ShapedType>(operand.get().getType()))
      captured.insert(operand.get());
  for (Value value : captured) {
    if (mapping.contains(value))
      continue;
    if (!matchPattern(value, m_Constant()))
      return anchor->emitError("the op's body uses a value defined outside "
                               "it that is not a constant; kernels take "
                               "buffers only");
    mapping.map(value, builder.clone(*value.getDefiningOp())->getResult(0));
  }

  Operation *clone = builder.clone(*anchor, mapping);
  // Tensor results go back into the buffers of their inits.
  unsigned firstInit = shapedOperands.size() - dps.getNumDpsInits();
  for (auto [index, result] : llvm::enumerate(clone->getResults())) {
    bufferization::MaterializeInDestinationOp::create(
        builder, loc, /*result=*/Type(), result,
        body->getArgument(firstInit + index), /*restrict=*/true,
        /*writable=*/true);
  }
  func::ReturnOp::create(builder, loc);
  return kernel;
}

Operation *ke::findKernelAnchor(ModuleOp module) {
  Operation *found = nullptr;
  module.walk([&](Operation *op) {
    if (isWorkloadAnchor(op)) {
      found = op;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

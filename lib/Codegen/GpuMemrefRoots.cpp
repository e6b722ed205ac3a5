//===- GpuMemrefRoots.cpp - Which buffer a memref value views -------------===//

#include "GpuMemrefRoots.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value ke::getMemrefRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      value = view.getViewSource();
      continue;
    }
    if (auto assumed = dyn_cast<memref::AssumeAlignmentOp>(def)) {
      value = assumed.getMemref();
      continue;
    }
    break;
  }
  return value;
}

bool ke::isDistinctBuffer(Value root) {
  if (auto arg = dyn_cast<BlockArgument>(root))
    return isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
      root.getDefiningOp());
}

bool ke::isWorkgroupMemref(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(memref);
}

//===- GpuMemory.cpp - Which memory a GPU kernel's accesses touch ---------===//

#include "GpuMemory.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
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
  auto memref = dyn_cast<BaseMemRefType>(type);
  return memref && gpu::GPUDialect::isWorkgroupMemoryAddressSpace(
                       memref.getMemorySpace());
}

bool ke::isPrivateMemref(Type type) {
  auto memref = dyn_cast<BaseMemRefType>(type);
  auto space = memref ? dyn_cast_if_present<gpu::AddressSpaceAttr>(
                            memref.getMemorySpace())
                      : gpu::AddressSpaceAttr();
  return space && space.getValue() == gpu::AddressSpace::Private;
}

bool ke::mayWriteMemory(Operation *op, function_ref<bool(Value)> matches) {
  WalkResult result = op->walk([&](Operation *inner) {
    if (isa<gpu::BarrierOp>(inner) ||
        inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect()))
        continue;
      Value value = effect.getValue();
      if (!value || matches(value))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

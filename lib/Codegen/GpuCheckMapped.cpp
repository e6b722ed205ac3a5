//===- GpuCheckMapped.cpp - No host code left by the schedule -------------===//
//
// ke-gpu-check-mapped (ke/Codegen/Passes.td), a step of the GPU lowering.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_GPUCHECKMAPPEDPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// Everything the schedule must have done: no tensors, no linalg ops and no
/// memory accesses left outside the launches, at least one launch.
LogicalResult checkMapped(ModuleOp module) {
  bool anyLaunch = false;
  WalkResult result = module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::LaunchOp>(op)) {
      anyLaunch = true;
      return WalkResult::skip();
    }
    // The runner executes the launches only: host code that touches
    // memory (an op the schedule did not map, e.g. an unfused consumer)
    // would silently never run.
    // Host allocations are fine: static ones become scratch buffers of the
    // runner (partial results one launch leaves for the next).
    if (op->getParentOfType<func::FuncOp>() &&
        !isa<func::ReturnOp, memref::AllocOp, memref::DeallocOp>(op) &&
        op->getNumRegions() == 0 && !isMemoryEffectFree(op)) {
      op->emitError("the schedule left this op on the host, outside the GPU "
                    "launches");
      return WalkResult::interrupt();
    }
    if (op->getDialect() &&
        op->getDialect()->getNamespace() == "linalg") {
      op->emitError("the schedule left this op outside the GPU launches");
      return WalkResult::interrupt();
    }
    for (Type type : op->getResultTypes())
      if (isa<TensorType>(type)) {
        op->emitError("the schedule left tensors behind (the GPU pipeline "
                      "needs the script to bufferize)");
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  if (!anyLaunch)
    return module.emitError("the schedule made no gpu.launch");
  return success();
}

struct GpuCheckMappedPass : ke::impl::GpuCheckMappedPassBase<GpuCheckMappedPass> {
  void runOnOperation() override {
    if (failed(checkMapped(getOperation())))
      signalPassFailure();
  }
};

} // namespace

//===- GpuSinkConstants.cpp - Constants into launches ---------------------===//
//
// ke-gpu-sink-constants (ke/Codegen/Passes.td), a step of the GPU lowering.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-gpu-sink-constants"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_GPUSINKCONSTANTSPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// Clones the constants and buffer reshapes a launch uses into its body, so
/// that outlining captures buffers only.
void sinkConstantsIntoLaunches(ModuleOp module) {
  module.walk([](gpu::LaunchOp launch) {
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(launch.getBody(), used);
    OpBuilder builder = OpBuilder::atBlockBegin(&launch.getBody().front());
    for (Value value : used) {
      Operation *def = value.getDefiningOp();
      // Reshapes of a host buffer (split_reduction's expand_shape of the
      // input) are views, computed in the kernel: a launch takes buffers
      // only.
      bool reshape =
          def && isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def) &&
          (isa<BlockArgument>(def->getOperand(0)) ||
           def->getOperand(0).getDefiningOp<memref::AllocOp>());
      if (!def || (!reshape && (def->getNumOperands() != 0 ||
                                !def->hasTrait<OpTrait::ConstantLike>())))
        continue;
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] sinking " << def->getName()
                              << " into a launch\n");
      Operation *clone = builder.clone(*def);
      replaceAllUsesInRegionWith(value, clone->getResult(0), launch.getBody());
    }
  });
}

struct GpuSinkConstantsPass : ke::impl::GpuSinkConstantsPassBase<GpuSinkConstantsPass> {
  void runOnOperation() override {
    sinkConstantsIntoLaunches(getOperation());
  }
};

} // namespace

//===- GpuMergeModules.cpp - One gpu.module per kernel group --------------===//
//
// ke-gpu-merge-modules (ke/Codegen/Passes.td), a step of the GPU lowering.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-gpu-merge-modules"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_GPUMERGEMODULESPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// Moves every kernel into the first gpu.module, so that one PTX module holds
/// all launches of the kernel module.
void mergeGpuModules(ModuleOp module) {
  SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
  if (gpuModules.size() < 2)
    return;
  gpu::GPUModuleOp first = gpuModules.front();
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] merging " << gpuModules.size()
                          << " gpu.modules into " << first.getName() << "\n");
  // Outlining names each kernel after its host function, so kernels of
  // different gpu.modules can share a name (two launches made at different
  // times: a global reduction's combine): a clashing kernel takes its
  // module's name, which is unique.
  llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
  for (gpu::GPUModuleOp other : llvm::drop_begin(gpuModules)) {
    for (Operation &op :
         llvm::make_early_inc_range(other.getBody()->getOperations())) {
      if (auto func = dyn_cast<gpu::GPUFuncOp>(op);
          func && first.lookupSymbol(func.getNameAttr())) {
        LLVM_DEBUG(llvm::dbgs()
                   << "[" DEBUG_TYPE "] renaming kernel " << func.getName()
                   << " of " << other.getName() << " (a clash)\n");
        renamed[{other.getNameAttr(), func.getNameAttr()}] =
            other.getNameAttr();
        func.setName(other.getNameAttr());
      }
      op.moveBefore(first.getBody(), first.getBody()->end());
    }
  }
  module.walk([&](gpu::LaunchFuncOp launch) {
    StringAttr name = launch.getKernelName();
    if (auto it = renamed.find({launch.getKernelModuleName(), name});
        it != renamed.end())
      name = it->second;
    launch.setKernelAttr(SymbolRefAttr::get(first.getNameAttr(),
                                            {FlatSymbolRefAttr::get(name)}));
  });
  for (gpu::GPUModuleOp other : llvm::drop_begin(gpuModules))
    other.erase();
}

struct GpuMergeModulesPass : ke::impl::GpuMergeModulesPassBase<GpuMergeModulesPass> {
  void runOnOperation() override {
    mergeGpuModules(getOperation());
  }
};

} // namespace

//===- GpuAllocsToAttributions.cpp - Kernel allocations as attributions ---===//
//
// ke-gpu-allocs-to-attributions (ke/Codegen/Passes.td), a step of the GPU lowering.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-gpu-allocs-to-attributions"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_GPUALLOCSTOATTRIBUTIONSPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

bool isWorkgroupSpace(MemRefType type) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

/// Static allocations in kernels become attributions of the gpu.func:
/// workgroup memory for #gpu.address_space<workgroup>, private memory for
/// the rest (per-thread temporaries). A kernel cannot call malloc.
LogicalResult allocsToAttributions(ModuleOp module) {
  WalkResult result = module.walk([](gpu::GPUFuncOp func) {
    SmallVector<memref::AllocOp> allocs;
    func.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          !alloc.getDynamicSizes().empty()) {
        alloc.emitError("a kernel allocates a buffer of dynamic shape ")
            << type;
        return WalkResult::interrupt();
      }
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] " << func.getName() << ": alloc of "
                 << type << " -> "
                 << (isWorkgroupSpace(type) ? "workgroup" : "private")
                 << " attribution\n");
      BlockArgument buffer =
          isWorkgroupSpace(type)
              ? func.addWorkgroupAttribution(type, alloc.getLoc())
              : func.addPrivateAttribution(type, alloc.getLoc());
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      alloc.replaceAllUsesWith(buffer);
      alloc.erase();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// The part of lowerVectorTransfers that is an upstream pass.

struct GpuAllocsToAttributionsPass : ke::impl::GpuAllocsToAttributionsPassBase<GpuAllocsToAttributionsPass> {
  void runOnOperation() override {
    if (failed(allocsToAttributions(getOperation())))
      signalPassFailure();
  }
};

} // namespace

//===- GpuAllocsToAttributions.cpp - Kernel allocations as attributions ---===//
//
// ke-gpu-allocs-to-attributions (ke/Codegen/Passes.td), a step of the GPU
// lowering.
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

/// Bytes every attribution is aligned to: one 128-bit access.
constexpr int64_t kAttributionAlignment = 16;

bool isWorkgroupSpace(MemRefType type) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

/// Static allocations in kernels become attributions of the gpu.func:
/// workgroup memory for #gpu.address_space<workgroup>, private memory for
/// the rest (per-thread temporaries), each aligned to 16 bytes. A kernel
/// cannot call malloc.
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
      // 16-byte aligned: kernels access these buffers with 128-bit vector
      // loads and stores, which fault on a lesser alignment, and with the
      // element type's alignment (2 for f16) a buffer could follow an 8-byte
      // one in shared memory: the probable cause of a
      // CUDA_ERROR_MISALIGNED_ADDRESS seen on an f16 matmul candidate with
      // a 1x4 A tile (docs/results.md).
      Attribute align = IntegerAttr::get(
          IntegerType::get(func.getContext(), 64), kAttributionAlignment);
      BlockArgument buffer;
      if (isWorkgroupSpace(type)) {
        buffer = func.addWorkgroupAttribution(type, alloc.getLoc());
        func.setWorkgroupAttributionAttr(func.getNumWorkgroupAttributions() - 1,
                                         "llvm.align", align);
      } else {
        buffer = func.addPrivateAttribution(type, alloc.getLoc());
        func.setPrivateAttributionAttr(func.getNumPrivateAttributions() - 1,
                                       "llvm.align", align);
      }
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

struct GpuAllocsToAttributionsPass
    : ke::impl::GpuAllocsToAttributionsPassBase<GpuAllocsToAttributionsPass> {
  void runOnOperation() override {
    if (failed(allocsToAttributions(getOperation())))
      signalPassFailure();
  }
};

} // namespace

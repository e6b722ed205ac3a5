//===- GpuBarriers.cpp - Barriers that streaming loops do not need --------===//
//
// See GpuBarriers.h.
//
//===----------------------------------------------------------------------===//

#include "GpuBarriers.h"
#include "GpuMemory.h"

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-gpu-hoist-barriers"

using namespace mlir;

namespace {

/// Whether `op` (and what it holds) may write workgroup memory, or has
/// effects this analysis cannot see (calls, unknown ops). Barriers count as
/// neither: they are what gets moved.
bool mayWriteWorkgroup(Operation *op) {
  return ke::mayWriteMemory(
      op, [](Value value) { return ke::isWorkgroupMemref(value.getType()); });
}

} // namespace

unsigned ke::hoistBarriersOutOfStreamingLoops(ModuleOp module) {
  unsigned erased = 0;
  SmallVector<scf::ForOp> loops;
  module.walk([&](gpu::GPUFuncOp kernel) {
    kernel.walk([&](scf::ForOp loop) { loops.push_back(loop); });
  });
  // Inner loops first: an inner loop's barrier moved after it may then
  // leave the outer loop's body.
  for (scf::ForOp loop : loops) {
    Block *body = loop.getBody();
    SmallVector<gpu::BarrierOp> barriers(body->getOps<gpu::BarrierOp>());
    if (barriers.empty() || mayWriteWorkgroup(loop))
      continue;
    for (gpu::BarrierOp barrier : barriers)
      barrier.erase();
    erased += barriers.size();
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << barriers.size()
                            << " barrier(s) of a loop that writes no "
                               "workgroup memory -> one after it\n");
    OpBuilder b(loop->getContext());
    b.setInsertionPointAfter(loop);
    gpu::BarrierOp::create(b, loop.getLoc());
  }
  return erased;
}

namespace ke {
#define GEN_PASS_DEF_GPUHOISTBARRIERSPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {
struct GpuHoistBarriersPass
    : ke::impl::GpuHoistBarriersPassBase<GpuHoistBarriersPass> {
  void runOnOperation() override {
    ke::hoistBarriersOutOfStreamingLoops(getOperation());
  }
};
} // namespace

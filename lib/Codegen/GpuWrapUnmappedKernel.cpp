//===- GpuWrapUnmappedKernel.cpp - One thread for unmapped kernels --------===//
//
// ke-gpu-wrap-unmapped-kernel (ke/Codegen/Passes.td), a step of the GPU lowering.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-gpu-wrap-unmapped-kernel"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_GPUWRAPUNMAPPEDKERNELPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// A kernel whose schedule mapped nothing (a 0-d result: nothing to spread
/// over blocks) runs its whole body in one launch of one thread, so that
/// every kernel module becomes device code.
void wrapUnmappedKernel(ModuleOp module) {
  auto host = module.lookupSymbol<func::FuncOp>(ke::kKernelFunctionName);
  if (!host || host.isExternal() || host.getBody().getBlocks().size() != 1)
    return;
  Block &body = host.getBody().front();
  bool hasLaunch = false;
  host.walk([&](gpu::LaunchOp) { hasLaunch = true; });
  if (hasLaunch || body.getOperations().size() < 2)
    return;
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] no launch in " << host.getName()
                          << ": wrapping its body in a 1x1x1 launch\n");
  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  Location loc = host.getLoc();
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  auto launch = gpu::LaunchOp::create(builder, loc, one, one, one, one, one,
                                      one);
  Block &launchBody = launch.getBody().front();
  auto ops = llvm::make_range(std::next(Block::iterator(launch)),
                              std::prev(body.end()));
  launchBody.getOperations().splice(launchBody.end(), body.getOperations(),
                                    ops.begin(), ops.end());
  builder.setInsertionPointToEnd(&launchBody);
  gpu::TerminatorOp::create(builder, loc);
}

struct GpuWrapUnmappedKernelPass : ke::impl::GpuWrapUnmappedKernelPassBase<GpuWrapUnmappedKernelPass> {
  void runOnOperation() override {
    wrapUnmappedKernel(getOperation());
  }
};

} // namespace

//===- GpuStageLoopOccupancy.cpp - Two GEMM blocks per SM -----------------===//
//
// ke-gpu-stage-loop-occupancy (ke/Codegen/Passes.td), a step of the CUDA
// lowering.
//
// A contraction's shared-memory stage loop (load the next A and B tiles
// from global memory, store them to shared memory, barrier, compute) waits
// on its global loads once per stage, and only other blocks on the same SM
// hide that wait. ptxas sizes registers for one kernel at a time: a
// 256-thread GEMM block with a fused elementwise tail (nn.Linear + Mish)
// took 150-170 registers per thread, so one block fit on an SM, and ran at
// 0.51-0.53x of eager where the plain GEMM's 126 registers (two blocks)
// ran at 0.69x. `nvvm.minctasm = 2` on the kernel (PTX .minnctapersm)
// bounds ptxas to 65536 / (2 x 256) = 128 registers; the few values it
// spills cost less than the lost block (H200, 2026-11-24: those tails
// 0.51-0.53x -> 0.67-0.69x, the rest unchanged; docs/gpu.md).
//
//===----------------------------------------------------------------------===//

#include "GpuMemory.h"

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-gpu-stage-loop-occupancy"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_GPUSTAGELOOPOCCUPANCYPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// The registers of an SM (every NVIDIA GPU since sm_50) and the most one
/// thread may hold: blocks of more than 65536 / (2 x 255) threads would be
/// bounded below what the hardware allows anyway.
constexpr int64_t kRegistersPerSM = 65536;
/// Two blocks must also fit in shared memory: 64 KiB each leaves room on
/// every sm_80+ SM (164 KiB and more).
constexpr int64_t kMaxWorkgroupBytes = 64 * 1024;
/// Below this many registers per thread, a bound costs more spills than
/// the second block wins: only blocks of up to 256 threads are bounded.
constexpr int64_t kMinRegistersPerThread = 128;

/// True when `op` and what it holds write only workgroup memory (or
/// nothing).
bool writesOnlyWorkgroupMemory(Operation *op) {
  return !ke::mayWriteMemory(op, [](Value value) {
    return !ke::isWorkgroupMemref(value.getType());
  });
}

/// True for a stage loop: an scf.for whose body reads global memory with a
/// vector.transfer_read ahead of a gpu.barrier and writes only workgroup
/// memory (its accumulator tile stays in registers,
/// ke-gpu-hoist-accumulator-tiles).
bool isStageLoop(scf::ForOp loop) {
  bool readsGlobal = false;
  for (Operation &op : *loop.getBody()) {
    if (isa<gpu::BarrierOp>(op))
      return readsGlobal && writesOnlyWorkgroupMemory(loop);
    if (auto read = dyn_cast<vector::TransferReadOp>(op))
      readsGlobal |= !ke::isWorkgroupMemref(read.getBase().getType());
  }
  return false;
}

/// Bytes of `func`'s workgroup attributions; nullopt when one is dynamic.
std::optional<int64_t> getWorkgroupBytes(gpu::GPUFuncOp func) {
  int64_t bytes = 0;
  for (BlockArgument attribution : func.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(attribution.getType());
    if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
      return std::nullopt;
    bytes += type.getNumElements() *
             ((type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
  }
  return bytes;
}

struct GpuStageLoopOccupancyPass
    : ke::impl::GpuStageLoopOccupancyPassBase<GpuStageLoopOccupancyPass> {
  void runOnOperation() override {
    Builder builder(&getContext());
    getOperation()->walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel() ||
          func->hasAttr(NVVM::NVVMDialect::getMinctasmAttrName()))
        return;
      DenseI32ArrayAttr block = func.getKnownBlockSizeAttr();
      if (!block)
        return;
      int64_t threads = 1;
      for (int32_t size : block.asArrayRef())
        threads *= size;
      std::optional<int64_t> shared = getWorkgroupBytes(func);
      if (threads <= 0 ||
          kRegistersPerSM / (2 * threads) < kMinRegistersPerThread ||
          !shared || *shared > kMaxWorkgroupBytes)
        return;
      WalkResult found = func.walk([](scf::ForOp loop) {
        return isStageLoop(loop) ? WalkResult::interrupt()
                                 : WalkResult::advance();
      });
      if (!found.wasInterrupted())
        return;
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] two blocks per SM for @"
                              << func.getName() << "\n");
      func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    builder.getI32IntegerAttr(2));
    });
  }
};

} // namespace

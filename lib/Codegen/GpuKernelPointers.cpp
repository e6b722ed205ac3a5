//===- GpuKernelPointers.cpp - Kernel pointer attributes ------------------===//
//
// ke-gpu-align-kernel-pointers (ke/Codegen/Passes.td), a step of the GPU lowering.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"
#include "GpuKernelABI.h"
#include "ke/Codegen/GpuKernel.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using ke::kKernelBufferAlignment;
using ke::kTensorMapAlignment;
using ke::kTensorMapBytes;

namespace ke {
#define GEN_PASS_DEF_GPUALIGNKERNELPOINTERSPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// Marks every pointer parameter of every kernel (the allocated and aligned
/// pointers of its memref descriptors) `llvm.align = 16`. LLVM's alignment
/// inference then proves 128-bit alignment for exactly those vector
/// accesses whose element offset is a multiple of the vector width (the
/// sketches make thread tiles vector-wide along the contiguous dimension),
/// so they become ld.global.v4 / st.global.v4; the others stay scalar.
/// (A memref.assume_alignment does not survive: expand-strided-metadata
/// looks through it and the unused assumption is erased.)
///
/// The pointers the kernel only reads through are also `llvm.noalias`: a
/// kernel's buffer arguments do not overlap (ke's kernel ABI,
/// docs/compile.md), and of a descriptor only the aligned pointer is used.
/// LLVM then knows that neither a barrier nor the kernel's stores change
/// such a buffer, so a thread's second and third read of a row (softmax:
/// max, sum, normalization) reuse the registers of the first instead of
/// going back to L1/L2, and the loads go through the non-coherent cache
/// (ld.global.nc), as nvcc does for `const __restrict__` pointers. Written
/// buffers stay as they were: noalias on them let LLVM keep more values in
/// registers across a matmul's stages, which spilled (ptxas-small).
/// Whether `pointer` is loaded through and never stored through: followed
/// through GEPs, casts and the memref descriptor structs the lowering
/// builds (insertvalue, extractvalue at the same position); any other use
/// counts as a store.
bool isReadOnlyPointer(Value pointer) {
  if (pointer.use_empty())
    return false;
  // A pointer, or a struct holding it at `position`.
  struct Item {
    Value value;
    SmallVector<int64_t> position;
  };
  SmallVector<Item> worklist = {{pointer, {}}};
  while (!worklist.empty()) {
    Item item = worklist.pop_back_val();
    for (OpOperand &use : item.value.getUses()) {
      Operation *user = use.getOwner();
      if (item.position.empty()) {
        if (isa<LLVM::LoadOp>(user))
          continue;
        if (isa<LLVM::GEPOp, LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(user)) {
          worklist.push_back({user->getResult(0), {}});
          continue;
        }
        if (auto insert = dyn_cast<LLVM::InsertValueOp>(user);
            insert && insert.getValue() == item.value) {
          worklist.push_back({insert.getResult(),
                              llvm::to_vector(insert.getPosition())});
          continue;
        }
        return false;
      }
      if (auto insert = dyn_cast<LLVM::InsertValueOp>(user);
          insert && insert.getContainer() == item.value &&
          insert.getValue() != item.value) {
        if (insert.getPosition() != ArrayRef<int64_t>(item.position))
          worklist.push_back({insert.getResult(), item.position});
        continue;
      }
      if (auto extract = dyn_cast<LLVM::ExtractValueOp>(user)) {
        if (extract.getPosition() == ArrayRef<int64_t>(item.position))
          worklist.push_back({extract.getResult(), {}});
        continue;
      }
      return false;
    }
  }
  return true;
}

/// Whether `pointer` is only named as the tensor map of TMA bulk copies.
bool isTensorMap(Value pointer) {
  return !pointer.use_empty() &&
         llvm::all_of(pointer.getUses(), [](OpOperand &use) {
           auto copy = dyn_cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(
               use.getOwner());
           return copy && copy.getTmaDescriptor() == use.get();
         });
}

void annotateKernelPointerAlignment(ModuleOp module) {
  module.walk([](LLVM::LLVMFuncOp func) {
    if (func.isExternal() || !func->getParentOfType<gpu::GPUModuleOp>() ||
        !(func->hasAttr(gpu::GPUDialect::getKernelFuncAttrName()) ||
          func->hasAttr("nvvm.kernel")))
      return;
    Builder builder(func.getContext());
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      auto pointer =
          dyn_cast<LLVM::LLVMPointerType>(func.getArgument(i).getType());
      // Generic (0) or global (1) pointers only: buffers of the kernel.
      if (!pointer || pointer.getAddressSpace() > 1)
        continue;
      if (isTensorMap(func.getArgument(i))) {
        // A TMA tensor map is passed by value (128 bytes, 64-byte aligned,
        // in the kernel's parameter space) and read in place: a grid
        // constant, whose generic address (cvta.param) the bulk copies
        // name. The runners pass the encoded map as the parameter.
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(LLVM::LLVMArrayType::get(
                            builder.getI8Type(), kTensorMapBytes)));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        builder.getI64IntegerAttr(kTensorMapAlignment));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                        builder.getUnitAttr());
        continue;
      }
      func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                      builder.getI64IntegerAttr(kKernelBufferAlignment));
      if (isReadOnlyPointer(func.getArgument(i)))
        func.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                        builder.getUnitAttr());
    }
  });
}

struct GpuAlignKernelPointersPass : ke::impl::GpuAlignKernelPointersPassBase<GpuAlignKernelPointersPass> {
  void runOnOperation() override {
    annotateKernelPointerAlignment(getOperation());
  }
};

} // namespace

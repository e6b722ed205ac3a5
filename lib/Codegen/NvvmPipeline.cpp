//===- NvvmPipeline.cpp - The CUDA part of the GPU lowering ---------------===//
//
// See ke/Codegen/NvvmPipeline.h. The pass list is the one verified for
// MLIR 22 (../shared/notes/mlir22-verified.md).
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/NvvmPipeline.h"

#include "ke/Codegen/Passes.h"
#include "ke/Codegen/PassPipeline.h"
#include "ke/Codegen/Ptxas.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace mlir;
using namespace ke;

/// The device passes up to the LLVM dialect, ending with the kernels' pointer
/// parameters' alignment (ke-gpu-align-kernel-pointers); then
/// getSerializePasses makes PTX.
static PassPipeline getNvvmLoweringPasses(const TargetDescription &target) {
  std::string chip = target.chip, features = target.features;
  PassPipeline passes;
  passes.push_back({[] { return createConvertLinalgToLoopsPass(); }});
  // ldmatrix and mma.sync (ke-gpu-vector-to-mma) to NVVM.
  passes.push_back({[] { return createConvertNVGPUToNVVMPass(); }});
  passes.push_back({[] { return createSCFToControlFlowPass(); }});
  // expand-strided-metadata before lower-affine, or translation fails on
  // unrealized casts.
  passes.push_back({[] { return memref::createExpandStridedMetadataPass(); }});
  passes.push_back({[] { return createLowerAffinePass(); }});
  passes.push_back({[chip, features] {
    GpuNVVMAttachTargetOptions attach;
    attach.chip = chip;
    attach.features = features;
    attach.optLevel = 3;
    return createGpuNVVMAttachTarget(attach);
  }});
  passes.push_back(
      {[] { return createConvertGpuOpsToNVVMOps(); }, "gpu.module"});
  // NVVM ops that translate to inline PTX (wgmma.mma_async,
  // ke-gpu-wgmma-matmuls).
  passes.push_back({[] { return createConvertNVVMToLLVMPass(); }});
  passes.push_back({[] { return createReconcileUnrealizedCastsPass(); }});
  passes.push_back({[] { return createGpuAlignKernelPointersPass(); }});
  return passes;
}

/// Serialization to PTX. `toolkit` is the CUDA toolkit whose libdevice the
/// serializer links (findCudaToolkit; empty in the pipeline hash, as the
/// ROCm device libraries are: where a toolkit lies is not the lowering).
static PassPipeline getSerializePasses(llvm::StringRef toolkit = "") {
  return {PassStep{[toolkit = toolkit.str()] {
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = "isa";
    binary.toolkitPath = toolkit;
    return createGpuModuleToBinaryPass(binary);
  }}};
}

std::string ke::getNvptxLoweringPipeline(const TargetDescription &target) {
  return printPipeline(getNvvmLoweringPasses(target)) + "," +
         printPipeline(getSerializePasses());
}

/// Whether `root` is a CUDA toolkit with libdevice.
static bool hasLibdevice(llvm::StringRef root) {
  return !root.empty() &&
         llvm::sys::fs::exists(root + "/nvvm/libdevice/libdevice.10.bc");
}

/// The CUDA toolkit whose libdevice resolves math functions (__nv_expf...):
/// $CUDA_HOME, $CUDA_PATH, $CUDA_ROOT, the toolkit of ptxas, /usr/local/cuda,
/// the first that has libdevice; empty when none has. It is handed to the
/// serializer as its toolkit, not through the environment.
static std::string findCudaToolkit() {
  for (const char *name : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (std::optional<std::string> root = llvm::sys::Process::GetEnv(name);
        root && hasLibdevice(*root))
      return *root;
  std::string ptxas = ke::findPtxas();
  if (!ptxas.empty()) {
    llvm::SmallString<128> root(ptxas);
    llvm::sys::path::remove_filename(root); // bin/
    llvm::sys::path::remove_filename(root);
    if (hasLibdevice(root))
      return root.str().str();
  }
  return hasLibdevice("/usr/local/cuda") ? "/usr/local/cuda" : "";
}

/// NVVM lowering turns math ops into calls of CUDA's libdevice (__nv_expf,
/// __nv_rsqrtf...). The serializer links libdevice from the toolkit it is
/// given and otherwise leaves the calls unresolved, PTX that ptxas and the
/// driver reject. A kernel that needs libdevice where there is none is
/// therefore an error here, saying how to get one, not a broken module
/// later (a fresh machine without CUDA met exactly that).
static LogicalResult checkLibdeviceFound(ModuleOp kernel,
                                         llvm::StringRef toolkit) {
  llvm::SetVector<llvm::StringRef> needed;
  kernel.walk([&](LLVM::LLVMFuncOp func) {
    if (func.isExternal() && func.getSymName().starts_with("__nv_"))
      needed.insert(func.getSymName());
  });
  if (needed.empty() || hasLibdevice(toolkit))
    return success();
  return kernel.emitError("the kernel calls CUDA libdevice functions (")
         << llvm::join(needed, ", ")
         << ") but no libdevice was found: set $CUDA_HOME to a CUDA toolkit, "
            "or $KE_PTXAS to the ptxas of one (scripts/fetch-ptxas.sh "
            "installs ptxas with libdevice from pip)";
}

LogicalResult ke::runNvvmLowering(ModuleOp kernel,
                                  const TargetDescription &target) {
  std::string toolkit = findCudaToolkit();
  if (failed(runPipeline(kernel, getNvvmLoweringPasses(target))) ||
      failed(checkLibdeviceFound(kernel, toolkit)))
    return failure();
  return runPipeline(kernel, getSerializePasses(toolkit));
}

FailureOr<GpuKernelBinary>
ke::finishNvptxBinary(ModuleOp kernel, const TargetDescription &target,
                      GpuKernelBinary binary,
                      const GpuLoweringOptions &options) {
  binary.format = "ptx";
  binary.image = binary.assembly;

  if (!options.assemble)
    return binary;
  if (findPtxas().empty()) {
    if (options.requireAssembler)
      return kernel.emitError("ptxas not found (set $KE_PTXAS or put ptxas "
                              "on PATH)");
    return binary;
  }
  std::string log;
  FailureOr<std::string> cubin = assemblePtx(binary.assembly, target.chip, log);
  binary.assemblerLog = log;
  if (failed(cubin))
    return kernel.emitError("ptxas rejected the PTX: ") << log;
  binary.format = "cubin";
  binary.image = std::move(*cubin);
  for (const PtxasKernelReport &report : parsePtxasReport(log)) {
    binary.registers = std::max(binary.registers, report.registers);
    binary.spillStoreBytes += report.spillStoreBytes;
    binary.spillLoadBytes += report.spillLoadBytes;
  }
  return binary;
}

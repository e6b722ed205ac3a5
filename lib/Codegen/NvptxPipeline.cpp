//===- NvptxPipeline.cpp - From a scheduled kernel to PTX and a cubin -----===//
//
// See ke/Codegen/GpuPipeline.h for the steps. The pass list after outlining
// is the one verified for MLIR 22 (../shared/notes/mlir22-verified.md), with
// vector transfers fully unrolled (no stack temporaries in kernels).
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/GpuPipeline.h"

#include "ExternalTool.h"
#include "GpuLaunches.h"
#include "GpuBarriers.h"

#include "ke/Codegen/Passes.h"
#include "ke/Codegen/PipelineHash.h"
#include "ke/Codegen/RocdlPipeline.h"

#include "ke/Config.h"
#include "ke/Workload/Kernel.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SHA256.h"

#include <cstdlib>

using namespace mlir;
using namespace ke;

/// The device passes up to the LLVM dialect, ending with the kernels' pointer
/// parameters' alignment (ke-gpu-align-kernel-pointers); then
/// getSerializePasses makes PTX.
static PassPipeline getNvvmLoweringPasses(const TargetDescription &target) {
  std::string chip = target.chip, features = target.features;
  PassPipeline passes;
  passes.push_back({[] { return createConvertLinalgToLoopsPass(); }});
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

namespace {

/// One step of the GPU lowering (see getGpuLoweringSteps): its text in the
/// pipeline that the pipeline hash covers (printed by the passes for pass
/// steps), the target families it runs for, and what it does.
struct GpuLoweringStep {
  enum Families { AllFamilies, CudaOnly };
  std::string text;
  Families families;
  std::function<LogicalResult(ModuleOp)> run;

  bool appliesTo(TargetFamily family) const {
    return families == AllFamilies || family == TargetFamily::Cuda;
  }
};

/// A step of passes, named by what they print.
GpuLoweringStep passStep(PassPipeline passes,
                         GpuLoweringStep::Families families =
                             GpuLoweringStep::AllFamilies) {
  std::string text = printPipeline(passes);
  return {std::move(text), families,
          [passes = std::move(passes)](ModuleOp module) {
            return runPipeline(module, passes);
          }};
}
} // namespace

namespace {







} // namespace

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

std::string ke::findPtxas() {
  if (std::optional<std::string> path =
          llvm::sys::Process::GetEnv("KE_PTXAS");
      path && !path->empty())
    return *path;
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  return "";
}

llvm::SmallVector<PtxasKernelReport> ke::parsePtxasReport(llvm::StringRef log) {
  llvm::SmallVector<PtxasKernelReport> reports;
  llvm::Regex function("Compiling entry function '([^']+)'");
  llvm::Regex spills("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  llvm::Regex usage("Used ([0-9]+) registers");
  llvm::Regex smem("([0-9]+) bytes smem");
  llvm::SmallVector<llvm::StringRef> lines, m;
  log.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (function.match(line, &m)) {
      reports.push_back({m[1].str()});
      continue;
    }
    if (reports.empty())
      continue;
    PtxasKernelReport &r = reports.back();
    if (spills.match(line, &m)) {
      m[1].getAsInteger(10, r.spillStoreBytes);
      m[2].getAsInteger(10, r.spillLoadBytes);
    }
    if (usage.match(line, &m))
      m[1].getAsInteger(10, r.registers);
    if (smem.match(line, &m))
      m[1].getAsInteger(10, r.sharedMemoryBytes);
  }
  return reports;
}

FailureOr<std::string> ke::assemblePtx(llvm::StringRef ptx,
                                       llvm::StringRef chip,
                                       std::string &log) {
  std::string ptxas = findPtxas();
  if (ptxas.empty()) {
    log = "ptxas not found (set $KE_PTXAS or put ptxas on PATH)";
    return failure();
  }
  ExternalTool tool{ptxas, "ptxas", "ptx", "cubin", "cubin"};
  return runExternalTool(
      tool, ptx,
      [&](llvm::StringRef input, llvm::StringRef output) {
        return llvm::SmallVector<std::string>{
            ptxas, ("-arch=" + chip).str(), "-v", "-O3", input.str(), "-o",
            output.str()};
      },
      log);
}

/// convert-vector-to-scf with full unrolling, the first half of turning
/// vector transfers into loads and stores (ke-gpu-lower-vector-transfers is
/// the second).
static PassPipeline getVectorToScfPasses() {
  return {PassStep{[] {
    return createConvertVectorToSCFPass(
        VectorTransferToSCFOptions().enableFullUnroll());
  }}};
}

/// The steps of the GPU lowering from the scheduled kernel to the device
/// passes, in order. lowerKernelToGpuBinary runs exactly these and
/// getGpuPipelineHash hashes exactly their names, so that a step added,
/// removed or reordered changes the hash by construction (the hand-written
/// list it replaced missed three steps that ran).
static llvm::ArrayRef<GpuLoweringStep> getGpuLoweringSteps() {
  static const std::vector<GpuLoweringStep> steps = [] {
    std::vector<GpuLoweringStep> list;
    // CSE before canonicalization: bufferized thread foralls leave copies
    // between identical subviews, which fold only once CSE made them one
    // value.
    list.push_back(passStep({{[] { return createCSEPass(); }},
                             {[] { return createCanonicalizerPass(); }},
                             {[] { return createCSEPass(); }}}));
    list.push_back(
        passStep({{[] { return createGpuHoistAccumulatorTilesPass(); }}}));
    list.push_back(
        passStep({{[] { return createGpuLaunchHostCombinesPass(); }}}));
    list.push_back(
        passStep({{[] { return createGpuWrapUnmappedKernelPass(); }}}));
    list.push_back(passStep({{[] { return createGpuCheckMappedPass(); }}}));
    list.push_back(passStep({{[] { return createGpuSinkConstantsPass(); }}}));
    list.push_back(
        passStep({{[] { return createGpuKernelOutliningPass(); }}}));
    list.push_back(passStep({{[] { return createGpuMergeModulesPass(); }}}));
    list.push_back(
        passStep({{[] { return createGpuAllocsToAttributionsPass(); }}}));
    list.push_back(passStep(getVectorToScfPasses()));
    list.push_back(
        passStep({{[] { return createGpuLowerVectorTransfersPass(); }}}));
    list.push_back(passStep({{[] { return createGpuCombinePartialsPass(); }}}));
    list.push_back(passStep({{[] { return createGpuHoistBarriersPass(); }}}));
    list.push_back(
        passStep({{[] { return createGpuAnnotateVectorAlignmentPass(); }}},
                 GpuLoweringStep::CudaOnly));
    return list;
  }();
  return steps;
}

std::string ke::getGpuPipelineText(const TargetDescription &target) {
  std::string text;
  for (const GpuLoweringStep &step : getGpuLoweringSteps())
    if (step.appliesTo(target.family))
      text += (text.empty() ? "" : ",") + step.text;
  return text + "," +
         (target.family == TargetFamily::Rocm
              ? getRocdlLoweringPipeline(target)
              : getNvptxLoweringPipeline(target));
}

std::string ke::getGpuPipelineHash(const TargetDescription &target) {
  // The chip is part of the target, not of the pipeline's structure.
  TargetDescription generic = target;
  generic.chip = "chip";
  return hashLoweringPipeline(getGpuPipelineText(generic));
}

FailureOr<GpuKernelBinary>
ke::lowerKernelToGpuBinary(ModuleOp kernel, const TargetDescription &target,
                           const GpuLoweringOptions &options) {
  if (!target.isGpu())
    return kernel.emitError("no GPU lowering for target '")
           << target.name << "'";
  for (const GpuLoweringStep &step : getGpuLoweringSteps())
    if (step.appliesTo(target.family) && failed(step.run(kernel)))
      return failure();
  bool rocm = target.family == TargetFamily::Rocm;
  // $KE_DUMP_GPU_MODULE names a file that receives the module as the
  // device passes get it (outlined, attributions, transfers lowered).
  if (std::optional<std::string> dump =
          llvm::sys::Process::GetEnv("KE_DUMP_GPU_MODULE");
      dump && !dump->empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(*dump, ec);
    if (!ec)
      kernel->print(os);
  }
  // The device pass list is the only step that differs for ROCm
  // (RocdlPipeline.cpp), besides assembling and linking below.
  if (rocm) {
    if (failed(runRocdlLowering(kernel, target)))
      return failure();
  } else {
    std::string toolkit = findCudaToolkit();
    if (failed(runPipeline(kernel, getNvvmLoweringPasses(target))) ||
        failed(checkLibdeviceFound(kernel, toolkit)))
      return failure();
    if (failed(runPipeline(kernel, getSerializePasses(toolkit))))
      return failure();
  }

  GpuKernelBinary binary;
  FailureOr<std::vector<GpuLaunch>> launches =
      readGpuLaunches(kernel, &binary.scratch);
  if (failed(launches))
    return failure();
  binary.launches = std::move(*launches);
  SmallVector<gpu::BinaryOp> binaries(kernel.getOps<gpu::BinaryOp>());
  if (binaries.size() != 1)
    return kernel.emitError("expected one gpu.binary after serialization, "
                            "got ")
           << binaries.size();
  auto object = dyn_cast<gpu::ObjectAttr>(binaries.front().getObjects()[0]);
  if (!object)
    return kernel.emitError("gpu.binary holds no object");
  binary.assembly = object.getObject().getValue().str();
  if (rocm)
    return finishRocdlBinary(kernel, target, std::move(binary));
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

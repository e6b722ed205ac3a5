//===- GpuPipeline.cpp - From a scheduled kernel to a GPU binary ----------===//
//
// See ke/Codegen/GpuPipeline.h for the steps. The steps before the device
// passes are shared by CUDA and ROCm; the device passes and what follows are
// NvvmPipeline.cpp's and RocdlPipeline.cpp's.
//
// Map of the Codegen component (docs/gpu.md, docs/compile.md):
//   CpuPipeline.cpp           applySchedule; a scheduled kernel to LLVM IR
//   CpuModuleLowering.cpp     a whole scheduled module to LLVM (compile)
//   GpuPipeline.cpp           the GPU step list (getGpuLoweringSteps), its
//                             text and hash, lowerKernelToGpuBinary
//   Gpu<Step>.cpp             one ke-gpu-* pass each (Passes.td), with a
//                             lit test in test/Codegen
//   NvvmPipeline.cpp          CUDA: NVVM passes, libdevice, PTX, cubin
//   RocdlPipeline.cpp         ROCm: ROCDL passes, AMDGCN, HSACO
//   Ptxas.cpp, ExternalTool   ptxas and other tools run on bytes
//   PassPipeline.cpp          pipelines as PassStep lists, printed for the
//     PipelineHash.cpp        hash that records are keyed by
//   LLVMTargets.cpp           the LLVM backends ke emits for
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/GpuPipeline.h"

#include "GpuLaunches.h"

#include "ke/Codegen/NvvmPipeline.h"
#include "ke/Codegen/PassPipeline.h"
#include "ke/Codegen/Passes.h"
#include "ke/Codegen/PipelineHash.h"
#include "ke/Codegen/RocdlPipeline.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace ke;

namespace {

/// One step of the GPU lowering (see getGpuLoweringSteps): its text in the
/// pipeline that the pipeline hash covers (printed by the passes for pass
/// steps), the target families it runs for, and what it does.
struct GpuLoweringStep {
  /// CudaTF32, CudaTF32x3 and CudaNoTF32: CUDA targets with +tf32, with
  /// +3xtf32, or with neither.
  enum Families {
    AllFamilies,
    CudaOnly,
    RocmOnly,
    CudaTF32,
    CudaTF32x3,
    CudaNoTF32,
    CudaMfmaEmulation
  };
  std::string text;
  Families families;
  std::function<LogicalResult(ModuleOp)> run;

  bool appliesTo(const TargetDescription &target) const {
    switch (families) {
    case AllFamilies:
      return true;
    case CudaOnly:
      return target.family == TargetFamily::Cuda;
    case RocmOnly:
      return target.family == TargetFamily::Rocm;
    case CudaTF32:
      return target.family == TargetFamily::Cuda && target.allowTF32 &&
             !target.tf32x3;
    case CudaTF32x3:
      return target.family == TargetFamily::Cuda && target.tf32x3;
    case CudaNoTF32:
      return target.family == TargetFamily::Cuda && !target.allowTF32;
    case CudaMfmaEmulation:
      return target.family == TargetFamily::Cuda && target.emulateMfma;
    }
    return false;
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
    // math.fpowi with the i64 exponent torch-mlir writes has no device
    // library function (libdevice's powi takes an i32); erf has one.
    list.push_back(passStep({{[] {
      ExpandMathPassOptions options;
      options.approximateErf = false;
      options.expandBf16Casts = false;
      return createExpandMathPass(options);
    }}}));
    // CSE before canonicalization: bufferized thread foralls leave copies
    // between identical subviews, which fold only once CSE made them one
    // value.
    list.push_back(passStep({{[] { return createCSEPass(); }},
                             {[] { return createCanonicalizerPass(); }},
                             {[] { return createCSEPass(); }}}));
    // Matmuls the gpu.wgmma sketch marked become whole Hopper kernels
    // before anything maps or outlines.
    list.push_back(passStep({{[] { return createGpuWgmmaMatmulsPass(); }}},
                            GpuLoweringStep::CudaOnly));
    // And the f32 GEMMs gpu.ffma marked, CUDA-core kernels.
    list.push_back(passStep({{[] { return createGpuFfmaMatmulsPass(); }}},
                            GpuLoweringStep::CudaOnly));
    // And those gpu.mfma marked, CDNA kernels (on +mfma-emulation CUDA
    // targets with MFMA emulated, to check them).
    list.push_back(passStep({{[] { return createGpuMfmaMatmulsPass(); }}},
                            GpuLoweringStep::RocmOnly));
    list.push_back(passStep({{[] {
                              GpuMfmaMatmulsPassOptions options;
                              options.emulate = true;
                              return createGpuMfmaMatmulsPass(options);
                            }}},
                            GpuLoweringStep::CudaMfmaEmulation));
    // Softmaxes gpu.softmax marked (rows no tiled schedule takes) become
    // kernels of their own, on every GPU.
    list.push_back(passStep({{[] { return createGpuRowSoftmaxPass(); }}}));
    // Likewise the arg reductions gpu.argrow marked.
    list.push_back(passStep({{[] { return createGpuRowArgmaxPass(); }}}));
    // And the norms gpu.rownorm marked (rows no warp multiple divides).
    list.push_back(passStep({{[] { return createGpuRowNormPass(); }}}));
    // And the transposes gpu.transpose marked.
    list.push_back(passStep({{[] { return createGpuTransposePass(); }}}));
    // And the reductions along an outer loop gpu.colreduce marked.
    list.push_back(passStep({{[] { return createGpuColumnReducePass(); }}}));
    list.push_back(
        passStep({{[] { return createGpuTransposeSharedTilesPass(); }}}));
    list.push_back(
        passStep({{[] { return createGpuHoistAccumulatorTilesPass(); }}}));
    // After hoisting (the mma.sync accumulators are the stage loop's
    // iter_args), before outlining and before vector transfers are lowered
    // (the conversion reads 2-D transfers).
    // f32 contractions become TF32 mma.sync only for +tf32 targets (the
    // option is in the text, so the two pipelines hash differently).
    list.push_back(passStep({{[] { return createGpuVectorToMmaPass(); }}},
                            GpuLoweringStep::CudaNoTF32));
    list.push_back(passStep({{[] {
                              GpuVectorToMmaPassOptions options;
                              options.allowTF32 = true;
                              return createGpuVectorToMmaPass(options);
                            }}},
                            GpuLoweringStep::CudaTF32));
    list.push_back(passStep({{[] {
                              GpuVectorToMmaPassOptions options;
                              options.allowTF32 = true;
                              options.tf32x3 = true;
                              return createGpuVectorToMmaPass(options);
                            }}},
                            GpuLoweringStep::CudaTF32x3));
    list.push_back(
        passStep({{[] { return createGpuPipelineStageCopiesPass(); }}},
                 GpuLoweringStep::CudaOnly));
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
    // After outlining: the bound is an attribute of the kernel (gpu.func).
    list.push_back(
        passStep({{[] { return createGpuStageLoopOccupancyPass(); }}},
                 GpuLoweringStep::CudaOnly));
    list.push_back(passStep(getVectorToScfPasses()));
    list.push_back(
        passStep({{[] { return createScalarizeBoolTransfersPass(); }}}));
    list.push_back(
        passStep({{[] { return createGpuFlattenVectorCastsPass(); }}}));
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
    if (step.appliesTo(target))
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
    if (step.appliesTo(target) && failed(step.run(kernel)))
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
  // The device passes are the only step that differs between CUDA
  // (NvvmPipeline.cpp) and ROCm (RocdlPipeline.cpp), besides assembling
  // and linking below.
  if (rocm) {
    if (failed(runRocdlLowering(kernel, target)))
      return failure();
  } else {
    if (failed(runNvvmLowering(kernel, target)))
      return failure();
  }

  GpuKernelBinary binary;
  FailureOr<std::vector<GpuLaunch>> launches =
      readGpuLaunches(kernel, &binary.scratch, &binary.tensorMaps);
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
  return finishNvptxBinary(kernel, target, std::move(binary), options);
}

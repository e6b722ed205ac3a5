//===- NvptxPipeline.cpp - From a scheduled kernel to PTX and a cubin -----===//
//
// See ke/Codegen/GpuPipeline.h for the steps. The pass list after outlining
// is the one verified for MLIR 22 (../shared/notes/mlir22-verified.md), with
// vector transfers fully unrolled (no stack temporaries in kernels).
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/GpuPipeline.h"

#include "GpuLaunches.h"

#include "ke/Codegen/RocdlPipeline.h"

#include "ke/Config.h"
#include "ke/InitAll/InitAll.h"
#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/ScopeExit.h"
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

std::string ke::getNvptxLoweringPipeline(const TargetDescription &target) {
  // Options inside quotes are space-separated (commas would split them).
  return llvm::formatv(
             "convert-linalg-to-loops,convert-scf-to-cf,"
             // expand-strided-metadata before lower-affine, or translation
             // fails on unrealized casts.
             "expand-strided-metadata,lower-affine,"
             "nvvm-attach-target{{chip={0} features={1} O=3},"
             "gpu.module(convert-gpu-to-nvvm),reconcile-unrealized-casts,"
             "gpu-module-to-binary{{format=isa}",
             target.chip, target.features)
      .str();
}

std::string ke::getGpuPipelineHash(const TargetDescription &target) {
  // The chip is part of the target, not of the pipeline's structure.
  TargetDescription generic = target;
  generic.chip = "chip";
  std::string text = "cse,canonicalize,sink-constants,gpu-kernel-outlining,"
                     "allocs-to-attributions,convert-vector-to-scf{full-unroll},"
                     "lower-transfers-to-loads," +
                     (target.family == TargetFamily::Rocm
                          ? getRocdlLoweringPipeline(generic)
                          : getNvptxLoweringPipeline(generic)) +
                     "|" KE_VERSION "|" LLVM_VERSION_STRING;
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(text));
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest).take_front(8),
                     /*LowerCase=*/true);
}

namespace {

LogicalResult runPipeline(ModuleOp module, llvm::StringRef pipeline) {
  PassManager pm(module->getName());
  std::string message;
  llvm::raw_string_ostream os(message);
  if (failed(parsePassPipeline(pipeline, pm, os)))
    return module.emitError("bad GPU pipeline: ") << message;
  return pm.run(module);
}

/// Everything the schedule must have done: no tensors and no linalg ops left
/// outside the launches, at least one launch.
LogicalResult checkMapped(ModuleOp module) {
  bool anyLaunch = false;
  WalkResult result = module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::LaunchOp>(op)) {
      anyLaunch = true;
      return WalkResult::skip();
    }
    if (op->getDialect() &&
        op->getDialect()->getNamespace() == "linalg") {
      op->emitError("the schedule left this op outside the GPU launches");
      return WalkResult::interrupt();
    }
    for (Type type : op->getResultTypes())
      if (isa<TensorType>(type)) {
        op->emitError("the schedule left tensors behind (the GPU pipeline "
                      "needs the script to bufferize)");
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  if (!anyLaunch)
    return module.emitError("the schedule made no gpu.launch");
  return success();
}

/// A kernel whose schedule mapped nothing (a 0-d result: nothing to spread
/// over blocks) runs its whole body in one launch of one thread, so that
/// every kernel module becomes device code.
void wrapUnmappedKernel(ModuleOp module) {
  auto host = module.lookupSymbol<func::FuncOp>(kKernelFunctionName);
  if (!host || host.isExternal() || host.getBody().getBlocks().size() != 1)
    return;
  Block &body = host.getBody().front();
  bool hasLaunch = false;
  host.walk([&](gpu::LaunchOp) { hasLaunch = true; });
  if (hasLaunch || body.getOperations().size() < 2)
    return;
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

/// Clones the constants a launch uses into its body, so that outlining
/// captures buffers only.
void sinkConstantsIntoLaunches(ModuleOp module) {
  module.walk([](gpu::LaunchOp launch) {
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(launch.getBody(), used);
    OpBuilder builder = OpBuilder::atBlockBegin(&launch.getBody().front());
    for (Value value : used) {
      Operation *def = value.getDefiningOp();
      if (!def || def->getNumOperands() != 0 ||
          !def->hasTrait<OpTrait::ConstantLike>())
        continue;
      Operation *clone = builder.clone(*def);
      replaceAllUsesInRegionWith(value, clone->getResult(0), launch.getBody());
    }
  });
}

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

/// Vector transfers become scalar loops (more than one dimension, or out of
/// bounds) and vector.load/store (the rest): the NVVM conversion lowers
/// neither transfers nor memrefs outside the default address space itself.
LogicalResult lowerVectorTransfers(ModuleOp module) {
  if (failed(runPipeline(module, "convert-vector-to-scf{full-unroll=true}")))
    return failure();
  RewritePatternSet patterns(module.getContext());
  // Transposed and broadcasting reads first become minor-identity ones; n-D
  // broadcasts, transposes and shape casts become 1-D vector ops, which the
  // NVVM conversion handles.
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  vector::populateVectorTransferLoweringPatterns(patterns,
                                                 /*maxTransferRank=*/1);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::EltWise);
  return applyPatternsGreedily(module, std::move(patterns));
}

/// Moves every kernel into the first gpu.module, so that one PTX module holds
/// all launches of the kernel module.
void mergeGpuModules(ModuleOp module) {
  SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
  if (gpuModules.size() < 2)
    return;
  gpu::GPUModuleOp first = gpuModules.front();
  for (gpu::GPUModuleOp other : llvm::drop_begin(gpuModules)) {
    for (Operation &op :
         llvm::make_early_inc_range(other.getBody()->getOperations()))
      op.moveBefore(first.getBody(), first.getBody()->end());
    other.erase();
  }
  module.walk([&](gpu::LaunchFuncOp launch) {
    launch.setKernelAttr(SymbolRefAttr::get(
        first.getNameAttr(),
        {FlatSymbolRefAttr::get(launch.getKernelName())}));
  });
}

} // namespace

/// The CUDA toolkit whose libdevice resolves math functions (__nv_expf...):
/// $CUDA_HOME, $CUDA_PATH, the toolkit of ptxas, /usr/local/cuda. MLIR only
/// looks at the environment, and without libdevice ptxas rejects the PTX.
static std::string findCudaToolkit() {
  auto hasLibdevice = [](llvm::StringRef root) {
    return !root.empty() &&
           llvm::sys::fs::exists(root + "/nvvm/libdevice/libdevice.10.bc");
  };
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
  llvm::SmallString<128> input, output, messages;
  if (llvm::sys::fs::createTemporaryFile("ke-kernel", "ptx", input) ||
      llvm::sys::fs::createTemporaryFile("ke-kernel", "cubin", output) ||
      llvm::sys::fs::createTemporaryFile("ke-ptxas", "log", messages)) {
    log = "cannot create temporary files for ptxas";
    return failure();
  }
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(input);
    llvm::sys::fs::remove(output);
    llvm::sys::fs::remove(messages);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input, ec);
    if (ec) {
      log = "cannot write " + input.str().str();
      return failure();
    }
    os << ptx;
  }
  std::string arch = ("-arch=" + chip).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, arch, "-v", "-O3",
                                             input, "-o", output};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, messages,
                                                messages};
  std::string error;
  int code = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                       /*SecondsToWait=*/120, 0, &error);
  if (auto text = llvm::MemoryBuffer::getFile(messages))
    log = (*text)->getBuffer().str();
  if (code != 0) {
    log = llvm::formatv("ptxas failed ({0}): {1}\n{2}", code, error, log);
    return failure();
  }
  auto cubin = llvm::MemoryBuffer::getFile(output, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!cubin) {
    log += "\nptxas wrote no cubin";
    return failure();
  }
  return (*cubin)->getBuffer().str();
}

FailureOr<GpuKernelBinary>
ke::lowerKernelToGpuBinary(ModuleOp kernel, const TargetDescription &target,
                           const GpuLoweringOptions &options) {
  if (!target.isGpu())
    return kernel.emitError("no GPU lowering for target '")
           << target.name << "'";
  registerKePasses(); // the pipelines name passes; idempotent
  // CSE before canonicalization: bufferized thread foralls leave copies
  // between identical subviews, which fold only once CSE made them one value.
  if (failed(runPipeline(kernel, "cse,canonicalize,cse")))
    return failure();
  wrapUnmappedKernel(kernel);
  if (failed(checkMapped(kernel)))
    return failure();
  sinkConstantsIntoLaunches(kernel);
  if (failed(runPipeline(kernel, "gpu-kernel-outlining")))
    return failure();
  mergeGpuModules(kernel);
  if (failed(allocsToAttributions(kernel)) ||
      failed(lowerVectorTransfers(kernel)))
    return failure();
  bool rocm = target.family == TargetFamily::Rocm;
  // MLIR 22's NVPTX serializer finds libdevice (__nv_expf...) through
  // CUDA_HOME only; without it ptxas rejects PTX that uses math functions.
  if (!rocm && !llvm::sys::Process::GetEnv("CUDA_HOME"))
    if (std::string toolkit = findCudaToolkit(); !toolkit.empty())
      ::setenv("CUDA_HOME", toolkit.c_str(), /*overwrite=*/0);
  // The device pass list is the only step that differs for ROCm
  // (RocdlPipeline.cpp), besides assembling and linking below.
  if (failed(rocm ? runRocdlLowering(kernel, target)
                  : runPipeline(kernel, getNvptxLoweringPipeline(target))))
    return failure();

  GpuKernelBinary binary;
  FailureOr<std::vector<GpuLaunch>> launches = readGpuLaunches(kernel);
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

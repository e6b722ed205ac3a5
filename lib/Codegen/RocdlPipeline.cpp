//===- RocdlPipeline.cpp - From a scheduled kernel to an AMDGPU code object ===//
//
// The ROCm half of the GPU lowering (ke/Codegen/RocdlPipeline.h).
// Everything up to the device pass list is shared with NVPTX
// (lowerKernelToGpuBinary, GpuPipeline.cpp); this file holds the ROCDL
// pass list and the step from AMDGCN assembly to a code object:
//   - MLIR's ROCDL serializer links the ROCm device libraries a kernel calls
//     into (ocml for math, ockl; Debian's rocm-device-libs) and emits AMDGCN
//     assembly (format=isa). MLIR 22 defines the ISA version itself
//     (__oclc_ISA_version), so no oclc_isa_version_<chip>.bc is needed: that
//     is why gfx942 works with Debian's libraries, which stop at 940;
//   - ke assembles the assembly with LLVM's AMDGPU MC layer and links it into
//     a shared object (HSACO) with ld.lld (ROCDL::assembleIsa, then
//     `ld.lld -shared`), so no $ROCM_PATH/llvm/bin/ld.lld is needed:
//     Debian's ld.lld-22 does;
//   - the kernels' resources (VGPRs, SGPRs, LDS, scratch) are read off the
//     assembly's kernel descriptors; LDS beyond the target's limit is an
//     error.
// Wavefronts are 64 wide (gfx9 CDNA is wave64 only; the ROCDL target's
// default), matching TargetDescription::gpu.warpSize.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/RocdlPipeline.h"

#include "ExternalTool.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/MathToROCDL/MathToROCDL.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using namespace ke;

namespace {

std::optional<std::string> getEnv(llvm::StringRef name) {
  std::optional<std::string> value = llvm::sys::Process::GetEnv(name);
  if (value && value->empty())
    return std::nullopt;
  return value;
}

/// Links an AMDGPU object into a code object with `lld -shared`. (MLIR's
/// ROCDL::linkObjectCode wants a ROCm folder holding llvm/bin/ld.lld.)
FailureOr<std::string> linkCodeObject(llvm::ArrayRef<char> object,
                                      llvm::StringRef lld, std::string &log) {
  ExternalTool tool{lld.str(), "ld.lld", "o", "hsaco", "code object"};
  return runExternalTool(
      tool, llvm::StringRef(object.data(), object.size()),
      [](llvm::StringRef input, llvm::StringRef output) {
        // argv[0] ld.lld selects lld's ELF flavour whatever the file is
        // called.
        return llvm::SmallVector<std::string>{"ld.lld", "-shared", input.str(),
                                              "-o", output.str()};
      },
      log);
}

/// Private attributions (per-thread buffers) of generic memref type become
/// #gpu.address_space<private> buffers cast back to generic where they are
/// used. The ROCDL lowering allocates them in address space 5 (scratch) and
/// cannot put such a pointer into a generic memref descriptor; NVVM's
/// allocas are generic, so the shared lowering leaves them generic. LLVM's
/// address space inference recovers scratch accesses through the casts.
void castPrivateAttributions(ModuleOp module) {
  module.walk([](gpu::GPUFuncOp func) {
    MLIRContext *context = func.getContext();
    auto privateSpace =
        gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Private);
    for (BlockArgument arg : func.getPrivateAttributions()) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || type.getMemorySpace())
        continue;
      arg.setType(MemRefType::get(type.getShape(), type.getElementType(),
                                  type.getLayout(), privateSpace));
      OpBuilder builder = OpBuilder::atBlockBegin(&func.getBody().front());
      auto cast =
          memref::MemorySpaceCastOp::create(builder, arg.getLoc(), type, arg);
      arg.replaceAllUsesExcept(cast, cast);
    }
  });
}

/// True for a 1-D vector of 16-bit floats whose length is not a power of
/// two (a thread's row of 5, 6 or 7 elements).
bool isOddHalfVector(Type type) {
  auto vector = dyn_cast<VectorType>(type);
  return vector && vector.getRank() == 1 && !vector.isScalable() &&
         isa<FloatType>(vector.getElementType()) &&
         vector.getElementTypeBitWidth() == 16 &&
         !llvm::isPowerOf2_64(vector.getNumElements());
}

/// Loads, elementwise ops and stores of 1-D vectors of 16-bit floats whose
/// length is not a power of two become one op per element. The AMDGPU
/// backend of LLVM 22 aborts on such vectors once they are extended to f32
/// (math.exp on vector<7xf16>, or a vector<5xf16> load computed in f32:
/// "Cannot select: f32 = Constant<-1>"; "Cannot select: ... store ...
/// trunc to v7f16" for the store of the result).
void scalarizeOddHalfVectors(ModuleOp module) {
  SmallVector<Operation *> elementwise;
  SmallVector<vector::LoadOp> loads;
  SmallVector<vector::StoreOp> stores;
  module.walk([&](Operation *op) {
    if (auto store = dyn_cast<vector::StoreOp>(op)) {
      if (isOddHalfVector(store.getVectorType()))
        stores.push_back(store);
      return;
    }
    if (auto load = dyn_cast<vector::LoadOp>(op)) {
      if (isOddHalfVector(load.getVectorType()))
        loads.push_back(load);
      return;
    }
    if (op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1 &&
        op->getNumRegions() == 0 &&
        (isOddHalfVector(op->getResult(0).getType()) ||
         llvm::any_of(op->getOperandTypes(), isOddHalfVector)))
      elementwise.push_back(op);
  });
  for (Operation *op : elementwise) {
    OpBuilder b(op);
    auto type = cast<VectorType>(op->getResult(0).getType());
    SmallVector<Value> elements;
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      SmallVector<Value> operands;
      for (Value operand : op->getOperands())
        operands.push_back(
            isa<VectorType>(operand.getType())
                ? vector::ExtractOp::create(b, op->getLoc(), operand,
                                            ArrayRef<int64_t>{i})
                      .getResult()
                : operand);
      OperationState state(op->getLoc(), op->getName(), operands,
                           {type.getElementType()}, op->getAttrs());
      elements.push_back(b.create(state)->getResult(0));
    }
    op->getResult(0).replaceAllUsesWith(
        vector::FromElementsOp::create(b, op->getLoc(), type, elements));
    op->erase();
  }
  // The element `i` places past `indices` (the last index moves).
  auto elementIndices = [](OpBuilder &b, Location loc, ValueRange indices,
                           int64_t i) {
    SmallVector<Value> moved(indices);
    moved.back() = arith::AddIOp::create(
        b, loc, moved.back(), arith::ConstantIndexOp::create(b, loc, i));
    return moved;
  };
  for (vector::LoadOp load : loads) {
    OpBuilder b(load);
    SmallVector<Value> elements;
    for (int64_t i = 0; i < load.getVectorType().getNumElements(); ++i)
      elements.push_back(memref::LoadOp::create(
          b, load.getLoc(), load.getBase(),
          elementIndices(b, load.getLoc(), load.getIndices(), i)));
    load.getResult().replaceAllUsesWith(vector::FromElementsOp::create(
        b, load.getLoc(), load.getVectorType(), elements));
    load.erase();
  }
  for (vector::StoreOp store : stores) {
    OpBuilder b(store);
    Location loc = store.getLoc();
    for (int64_t i = 0; i < store.getVectorType().getNumElements(); ++i) {
      Value element = vector::ExtractOp::create(b, loc, store.getValueToStore(),
                                                ArrayRef<int64_t>{i});
      memref::StoreOp::create(b, loc, element, store.getBase(),
                              elementIndices(b, loc, store.getIndices(), i));
    }
    store.erase();
  }
}

bool hasDeviceLibs(llvm::StringRef root) {
  llvm::SmallString<256> path(root);
  llvm::sys::path::append(path, "amdgcn", "bitcode", "ocml.bc");
  return llvm::sys::fs::exists(path);
}

} // namespace

ke::PassPipeline
ke::getRocdlLoweringPasses(const TargetDescription &target,
                           llvm::StringRef deviceLibRoot) {
  std::string chip = target.chip, toolkit = deviceLibRoot.str();
  PassPipeline passes;
  passes.push_back({[] { return createConvertLinalgToLoopsPass(); }});
  passes.push_back({[] { return createSCFToControlFlowPass(); }});
  passes.push_back({[] { return memref::createExpandStridedMetadataPass(); }});
  passes.push_back({[] { return createLowerAffinePass(); }});
  passes.push_back({[chip] {
    GpuROCDLAttachTargetOptions attach;
    attach.chip = chip;
    attach.optLevel = 3;
    // Code object version 5: loaded by ROCm 5.3 and later (MLIR's default,
    // 6, needs ROCm 6.3).
    attach.abiVersion = "500";
    return createGpuROCDLAttachTarget(attach);
  }});
  // Math ops to device-library calls (__ocml_*) first: the generic lowering
  // would make LLVM intrinsics such as llvm.tanh, which the AMDGPU backend
  // cannot select. (A module pass; the host function has no math ops left.)
  passes.push_back({[chip] {
    ConvertMathToROCDLOptions math;
    math.chipset = chip;
    return createConvertMathToROCDL(math);
  }});
  passes.push_back({[chip] {
                      ConvertGpuOpsToROCDLOpsOptions gpu;
                      gpu.chipset = chip;
                      return createConvertGpuOpsToROCDLOps(gpu);
                    },
                    "gpu.module"});
  passes.push_back({[] { return createReconcileUnrealizedCastsPass(); }});
  passes.push_back({[toolkit] {
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = "isa";
    binary.toolkitPath = toolkit;
    return createGpuModuleToBinaryPass(binary);
  }});
  return passes;
}

std::string ke::getRocdlLoweringPipeline(const TargetDescription &target,
                                         llvm::StringRef deviceLibRoot) {
  return printPipeline(getRocdlLoweringPasses(target, deviceLibRoot));
}

LogicalResult ke::runRocdlLowering(ModuleOp kernel,
                                   const TargetDescription &target) {
  // convert-gpu-to-nvvm unrolls n-D vector.from_elements (which the vector
  // transfer lowering leaves, e.g. for register tiles of 4x4) to 1-D before
  // converting; convert-gpu-to-rocdl does not, and translation then fails on
  // the leftover op. So it is done here.
  RewritePatternSet patterns(kernel.getContext());
  vector::populateVectorFromElementsUnrollPatterns(patterns);
  vector::populateVectorToElementsUnrollPatterns(patterns);
  if (failed(applyPatternsGreedily(kernel, std::move(patterns))))
    return kernel.emitError("cannot unroll n-D vector.from_elements");
  castPrivateAttributions(kernel);
  scalarizeOddHalfVectors(kernel);
  return runPipeline(kernel,
                     getRocdlLoweringPasses(target, findRocmDeviceLibRoot()));
}

std::string ke::findRocmDeviceLibRoot() {
  llvm::SmallVector<std::string> candidates;
  for (llvm::StringRef name : {"KE_ROCM_DEVICE_LIBS", "ROCM_PATH"})
    if (std::optional<std::string> value = getEnv(name))
      candidates.push_back(*value);
  candidates.push_back("/opt/rocm");
  // Debian's rocm-device-libs: /usr/lib/<multiarch>/amdgcn/bitcode.
  candidates.push_back("/usr/lib/x86_64-linux-gnu");
  candidates.push_back("/usr/lib/aarch64-linux-gnu");
  for (const std::string &root : candidates)
    if (hasDeviceLibs(root))
      return root;
  return "";
}

std::string ke::findLld() {
  if (std::optional<std::string> path = getEnv("KE_LLD"))
    return *path;
  for (llvm::StringRef name : {"ld.lld-22", "ld.lld"})
    if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(name))
      return *found;
  llvm::SmallVector<std::string> roots;
  if (std::optional<std::string> rocm = getEnv("ROCM_PATH"))
    roots.push_back(*rocm);
  roots.push_back("/opt/rocm");
  for (const std::string &root : roots) {
    llvm::SmallString<256> path(root);
    llvm::sys::path::append(path, "llvm", "bin", "ld.lld");
    if (llvm::sys::fs::can_execute(path))
      return path.str().str();
  }
  return "";
}

llvm::SmallVector<AmdgpuKernelReport>
ke::parseAmdgpuKernelReports(llvm::StringRef assembly) {
  llvm::SmallVector<AmdgpuKernelReport> reports;
  llvm::Regex kernel("^[ \t]*\\.amdhsa_kernel[ \t]+([^ \t]+)");
  llvm::Regex field("^[ \t]*\\.(amdhsa_[a-z_0-9]+|vgpr_spill_count|"
                    "sgpr_spill_count)[ \t:]+([0-9]+)");
  llvm::SmallVector<llvm::StringRef> lines, m;
  assembly.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (kernel.match(line, &m)) {
      reports.push_back({m[1].str()});
      continue;
    }
    if (reports.empty() || !field.match(line, &m))
      continue;
    uint64_t value = 0;
    if (m[2].getAsInteger(10, value))
      continue;
    AmdgpuKernelReport &r = reports.back();
    if (m[1] == "amdhsa_next_free_vgpr")
      r.vgprs = value;
    else if (m[1] == "amdhsa_next_free_sgpr")
      r.sgprs = value;
    else if (m[1] == "amdhsa_group_segment_fixed_size")
      r.ldsBytes = value;
    else if (m[1] == "amdhsa_private_segment_fixed_size")
      r.scratchBytes = value;
  }
  // The metadata (.amdgpu_metadata, after the descriptors) names each
  // kernel's spills; match them by order.
  llvm::Regex spill("^[ \t]*\\.vgpr_spill_count:[ \t]+([0-9]+)");
  unsigned index = 0;
  for (llvm::StringRef line : lines)
    if (spill.match(line, &m) && index < reports.size())
      m[1].getAsInteger(10, reports[index++].vgprSpills);
  return reports;
}

FailureOr<GpuKernelBinary> ke::finishRocdlBinary(ModuleOp kernel,
                                                 const TargetDescription &target,
                                                 GpuKernelBinary binary) {
  auto emitError = [&] { return kernel.emitError(); };
  FailureOr<SmallVector<char, 0>> object = ROCDL::assembleIsa(
      binary.assembly, target.triple, target.chip, target.features, emitError);
  if (failed(object))
    return failure();
  std::string lld = findLld();
  if (lld.empty())
    return kernel.emitError("ld.lld not found (set $KE_LLD, install lld-22, "
                            "or set $ROCM_PATH to a ROCm installation)");
  std::string linkLog;
  FailureOr<std::string> hsaco = linkCodeObject(*object, lld, linkLog);
  if (failed(hsaco))
    return kernel.emitError("cannot link the code object: ") << linkLog;
  binary.format = "hsaco";
  binary.image = std::move(*hsaco);

  llvm::raw_string_ostream log(binary.assemblerLog);
  for (const AmdgpuKernelReport &r : parseAmdgpuKernelReports(binary.assembly)) {
    log << llvm::formatv("{0}: {1} VGPRs, {2} SGPRs, {3} bytes LDS, {4} bytes "
                         "scratch, {5} VGPR spills\n",
                         r.kernelName, r.vgprs, r.sgprs, r.ldsBytes,
                         r.scratchBytes, r.vgprSpills);
    binary.registers = std::max<uint32_t>(binary.registers, r.vgprs);
    // Spilled VGPRs go to scratch: 4 bytes per lane and register.
    binary.spillStoreBytes += 4 * r.vgprSpills;
    if (r.ldsBytes > target.gpu.sharedMemoryPerBlockBytes)
      return kernel.emitError("kernel ")
             << r.kernelName << " uses " << r.ldsBytes
             << " bytes of LDS, more than the "
             << target.gpu.sharedMemoryPerBlockBytes << " of " << target.name;
  }
  return binary;
}

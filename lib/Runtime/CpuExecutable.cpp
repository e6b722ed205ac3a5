//===- CpuExecutable.cpp - JIT-compiled kernels on this CPU ---------------===//

#include "ke/Runtime/CpuExecutable.h"

#include "ke/Codegen/LLVMTargets.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/TargetParser/Host.h"

#include <cstring>

using namespace ke;

CpuExecutable::~CpuExecutable() = default;

namespace {

/// What MLIR passes for an unranked memref: its rank and a pointer to the
/// ranked descriptor {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct UnrankedMemRef {
  int64_t rank;
  int64_t *descriptor;
};

/// memref.copy between non-contiguous memrefs lowers to a call to
/// `memrefCopy`, which MLIR's runner library provides. ke carries its own so
/// that the static ke-opt needs no LLVM libraries at run time.
extern "C" void keMemrefCopy(int64_t elementSize, UnrankedMemRef *source,
                             UnrankedMemRef *target) {
  int64_t rank = source->rank;
  const int64_t *src = source->descriptor, *dst = target->descriptor;
  const int64_t *sizes = src + 3, *srcStrides = src + 3 + rank,
                *dstStrides = dst + 3 + rank;
  auto *srcBase = reinterpret_cast<char *>(src[1]) + src[2] * elementSize;
  auto *dstBase = reinterpret_cast<char *>(dst[1]) + dst[2] * elementSize;
  int64_t total = 1;
  for (int64_t d = 0; d < rank; ++d)
    total *= sizes[d];
  if (total == 0)
    return;
  llvm::SmallVector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < total; ++n) {
    int64_t srcOffset = 0, dstOffset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      srcOffset += index[d] * srcStrides[d];
      dstOffset += index[d] * dstStrides[d];
    }
    std::memcpy(dstBase + dstOffset * elementSize,
                srcBase + srcOffset * elementSize, elementSize);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
}

} // namespace

void *ke::getMemrefCopyFunction() {
  return reinterpret_cast<void *>(&keMemrefCopy);
}

std::optional<std::string> ke::findOpenMPRuntime() {
  if (std::optional<std::string> env = llvm::sys::Process::GetEnv("KE_LIBOMP"))
    return env;
  for (const char *path :
       {"/usr/lib/llvm-22/lib/libomp.so", "/usr/lib/x86_64-linux-gnu/libomp.so.5",
        "/usr/lib/aarch64-linux-gnu/libomp.so.5", "/usr/lib/libomp.so"})
    if (llvm::sys::fs::exists(path))
      return std::string(path);
  return std::nullopt;
}

/// OpenMP ops stay in the omp dialect until translation to LLVM IR, which
/// turns them into calls to the runtime's __kmpc_* functions.
static bool usesOpenMP(mlir::ModuleOp module) {
  bool found = false;
  module.walk([&](mlir::Operation *op) {
    if (op->getName().getDialectNamespace() == "omp") {
      found = true;
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return found;
}

llvm::Expected<std::unique_ptr<CpuExecutable>>
CpuExecutable::create(mlir::ModuleOp llvmModule) {
  initializeKeLLVMTargets();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder->createTargetMachine();
  if (!machine)
    return machine.takeError();

  llvm::SmallVector<llvm::StringRef> libraries;
  std::optional<std::string> openmp;
  if (usesOpenMP(llvmModule)) {
    openmp = findOpenMPRuntime();
    if (!openmp)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "the kernel uses OpenMP but LLVM's OpenMP runtime (libomp) is not "
          "installed; install libomp-22-dev or set KE_LIBOMP");
    libraries.push_back(*openmp);
  }
  auto optimize = mlir::makeOptimizingTransformer(3, 0, machine->get());
  mlir::ExecutionEngineOptions options;
  options.transformer = optimize;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  options.sharedLibPaths = libraries;
  options.enableGDBNotificationListener = false;
  auto engine =
      mlir::ExecutionEngine::create(llvmModule, options, std::move(*machine));
  if (!engine)
    return engine.takeError();
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("memrefCopy")] = {
        llvm::orc::ExecutorAddr::fromPtr(&keMemrefCopy),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  std::unique_ptr<CpuExecutable> executable(new CpuExecutable());
  executable->engine = std::move(*engine);
  auto entry = executable->engine->lookupPacked("_mlir_ciface_kernel");
  if (!entry)
    return entry.takeError();
  executable->entry = *entry;
  return executable;
}

llvm::Error CpuExecutable::run(llvm::MutableArrayRef<HostBuffer> buffers) {
  llvm::SmallVector<void *> descriptors;
  for (HostBuffer &buffer : buffers)
    descriptors.push_back(buffer.getDescriptor());
  llvm::SmallVector<void *> args;
  for (void *&descriptor : descriptors)
    args.push_back(&descriptor);
  entry(args.data());
  return llvm::Error::success();
}

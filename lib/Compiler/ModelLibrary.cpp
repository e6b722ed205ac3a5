//===- ModelLibrary.cpp - A GPU model as one shared object ----------------===//
//
// The model's blob (ModelPlan.h) goes into an object of its own, as one
// read-only global, `ke_model_blob`, emitted by LLVM for this machine; lld,
// linked into ke, links it with the model runtime's object (ModelRuntime.c,
// carried inside ke as bytes) into a shared object that exports the ABI of
// ke-c/ke_model.h. The object depends on libc alone, resolved when the
// model is loaded into a process (which always has it), so no system
// linker, compiler or C library stubs are needed where models are compiled.
//
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"

#include "ke/Codegen/LLVMTargets.h"

#include "lld/Common/Driver.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Plugins/PassPlugin.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include "ModelRuntimeObject.inc"

LLD_HAS_DRIVER(elf)

/// Debian's libLLVMLTO.a, which lld links, names Polly's entry point as if
/// Polly were linked into LLVM; Debian ships Polly only as a loadable
/// plugin. ke never runs LTO, so an empty plugin answers the reference.
llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "Polly (not in ke)", "0", nullptr};
}

using namespace mlir;
using namespace ke;

/// An object file for this machine holding `blob` as `ke_model_blob`.
static FailureOr<std::string> emitBlobObject(ModuleOp module,
                                             llvm::StringRef blob) {
  initializeKeLLVMTargets();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string message;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, message);
  if (!target)
    return module.emitError("ke: no LLVM backend for this machine: ")
           << message;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_));
  llvm::LLVMContext context;
  llvm::Module llvmModule("ke_model", context);
  llvmModule.setTargetTriple(triple);
  llvmModule.setDataLayout(machine->createDataLayout());
  llvm::Constant *bytes = llvm::ConstantDataArray::getString(
      context, blob, /*AddNull=*/false);
  auto *global = new llvm::GlobalVariable(
      llvmModule, bytes->getType(), /*isConstant=*/true,
      llvm::GlobalValue::ExternalLinkage, bytes, "ke_model_blob");
  global->setVisibility(llvm::GlobalValue::HiddenVisibility);
  global->setAlignment(llvm::Align(8));
  llvm::SmallString<0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return module.emitError("ke: LLVM cannot emit an object for this machine");
  codegen.run(llvmModule);
  return std::string(object.begin(), object.end());
}

/// Writes `bytes` to `path`.
static LogicalResult writeFile(ModuleOp module, llvm::StringRef path,
                               llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (!ec)
    os << bytes;
  if (ec || os.has_error())
    return module.emitError("ke: cannot write '") << path << "'";
  return success();
}

FailureOr<std::string> ke::linkModelLibrary(ModuleOp module,
                                            llvm::StringRef blob) {
  FailureOr<std::string> blobObject = emitBlobObject(module, blob);
  if (failed(blobObject))
    return failure();
  llvm::SmallString<128> directory;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("ke-model", directory))
    return module.emitError("ke: cannot create a temporary directory: ")
           << ec.message();
  std::string blobPath = (directory + "/model.o").str();
  std::string runtimePath = (directory + "/runtime.o").str();
  std::string outputPath = (directory + "/model.so").str();
  auto cleanup = [&] { llvm::sys::fs::remove_directories(directory); };
  if (failed(writeFile(module, blobPath, *blobObject)) ||
      failed(writeFile(module, runtimePath,
                       llvm::StringRef(reinterpret_cast<const char *>(
                                           kModelRuntimeObject),
                                       kModelRuntimeObject_size)))) {
    cleanup();
    return failure();
  }
  // libc's symbols stay undefined: they bind to the process's libc when
  // the model is loaded.
  const char *args[] = {"ld.lld",          "-shared",
                        "-o",              outputPath.c_str(),
                        "--gc-sections",   "-z",
                        "noexecstack",     "-soname",
                        "ke_model.so",     blobPath.c_str(),
                        runtimePath.c_str()};
  std::string log;
  llvm::raw_string_ostream logStream(log);
  lld::Result linked =
      lld::lldMain(args, logStream, logStream, {{lld::Gnu, &lld::elf::link}});
  if (linked.retCode != 0) {
    cleanup();
    return module.emitError("ke: linking the model failed: ") << log;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> library =
      llvm::MemoryBuffer::getFile(outputPath);
  cleanup();
  if (!library)
    return module.emitError("ke: cannot read the linked model");
  return (*library)->getBuffer().str();
}

//===- Version.cpp - ke-opt --version -------------------------------------===//

#include "Subcommands.h"

#include "ke/Config.h"
#include "ke/Revision.h"
#include "ke/Codegen/LLVMTargets.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/WithColor.h"

void ke::printVersion(llvm::raw_ostream &os) {
  os << "ke " << KE_VERSION << " (" << KE_GIT_REVISION << ")\n";
  os << "  LLVM " << LLVM_VERSION_STRING << ", MLIR " << LLVM_VERSION_STRING
     << "\n";
  os << "  LLVM backends: " << llvm::join(getCompiledInLLVMTargets(), ", ")
     << "\n";
  os << "  target families: cpu (x86-64, aarch64), cuda (nvptx64), "
        "rocm (amdgcn)\n";
}

llvm::raw_ostream &ke::subcommandError(llvm::StringRef name) {
  return llvm::WithColor::error(llvm::errs(), ("ke-opt " + name).str());
}

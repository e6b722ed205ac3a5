//===- GpuLibrary.cpp - Opening a GPU runtime library at run time ---------===//

#include "GpuLibrary.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Process.h"

#include <dlfcn.h>

using namespace ke;

bool GpuSymbol::resolve(void *library) const {
  for (const char *candidate : {name, fallback}) {
    if (!candidate)
      continue;
    if (void *symbol = dlsym(library, candidate)) {
      assign(slot, symbol);
      return true;
    }
  }
  return false;
}

std::vector<std::string> ke::getGpuLibraryNames(const GpuLibraryKind &kind) {
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv(kind.environmentVariable))
    if (!env->empty())
      return {*env};
  return {kind.defaultNames.begin(), kind.defaultNames.end()};
}

llvm::Expected<std::string>
ke::openGpuLibrary(const GpuLibraryKind &kind,
                   llvm::ArrayRef<GpuSymbol> symbols) {
  std::vector<std::string> names = getGpuLibraryNames(kind);
  void *library = nullptr;
  std::string name, reasons;
  for (const std::string &candidate : names) {
    library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library) {
      name = candidate;
      break;
    }
    const char *reason = dlerror();
    if (reasons.empty())
      reasons = reason ? reason : "dlopen failed";
  }
  if (!library)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no %s (%s not found: %s); %s", kind.what,
                                   llvm::join(names, ", ").c_str(),
                                   reasons.c_str(), kind.missingHint);
  for (const GpuSymbol &symbol : symbols) {
    if (symbol.resolve(library))
      continue;
    dlclose(library);
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(), "the %s %s lacks %s (%s)", kind.what,
        name.c_str(), symbol.getName(), kind.missingSymbolHint);
  }
  return name;
}

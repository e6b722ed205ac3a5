//===- GpuLibrary.h - Opening a GPU runtime library at run time -*- C++ -*-===//
//
// ke-opt is one static binary that must run on machines without a GPU, so
// it links neither libcuda nor libamdhip64: CudaDriver and HipDriver open
// their library with dlopen the first time a device is asked for and fill a
// table of function pointers from its symbols. Finding the library (an
// environment variable or default names), saying why it is missing, and
// resolving the table from a list of symbols are the same for both, and
// written once here.
//
// Private to lib/Runtime.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_RUNTIME_GPULIBRARY_H
#define KE_LIB_RUNTIME_GPULIBRARY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <mutex>
#include <string>
#include <vector>

namespace ke {

/// Where ke looks for one runtime's library, and how messages name it.
struct GpuLibraryKind {
  /// "CUDA driver": "no CUDA driver (...)", "the CUDA driver ... lacks ...".
  const char *what;
  /// The variable that names the library instead of `defaultNames`.
  const char *environmentVariable;
  /// The names tried in order when the variable is unset or empty.
  llvm::ArrayRef<const char *> defaultNames;
  /// What the message for a missing library adds: what the targets need.
  const char *missingHint;
  /// What the message for a missing symbol adds: "a driver older than ...?".
  const char *missingSymbolHint;
};

/// One function pointer of a runtime's table and the symbol that provides
/// it, or, where the library lacks that, the fallback (an older name).
class GpuSymbol {
public:
  template <typename Function>
  GpuSymbol(Function &slot, const char *name, const char *fallback = nullptr)
      : slot(&slot), name(name), fallback(fallback),
        assign([](void *slot, void *symbol) {
          *static_cast<Function *>(slot) = reinterpret_cast<Function>(symbol);
        }) {}

  /// Sets the function pointer from `library`; false when the library
  /// exports neither name.
  bool resolve(void *library) const;
  /// The preferred name, which messages give for a missing symbol.
  const char *getName() const { return name; }

private:
  void *slot;
  const char *name, *fallback;
  void (*assign)(void *slot, void *symbol);
};

/// The library names ke tries for `kind`, in order: $<environmentVariable>
/// alone when set and not empty, else the default names.
std::vector<std::string> getGpuLibraryNames(const GpuLibraryKind &kind);

/// Opens the first of `kind`'s library names that loads and resolves every
/// one of `symbols` from it. Returns the name it opened. Fails with "no
/// <what> (<names> not found: <dlerror of the first>); <missingHint>" or,
/// closing the library again, "the <what> <name> lacks <symbol>
/// (<missingSymbolHint>)".
llvm::Expected<std::string> openGpuLibrary(const GpuLibraryKind &kind,
                                           llvm::ArrayRef<GpuSymbol> symbols);

/// Calls `open` once per process (per Table); later calls return the same
/// table or the same error, so a missing driver is looked for once.
template <typename Table>
llvm::Expected<const Table *>
loadOnce(llvm::Expected<const Table *> (*open)()) {
  static std::once_flag once;
  static const Table *table = nullptr;
  static std::string error;
  std::call_once(once, [open] {
    llvm::Expected<const Table *> opened = open();
    if (opened)
      table = *opened;
    else
      error = llvm::toString(opened.takeError());
  });
  if (!table)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  return table;
}

} // namespace ke

#endif // KE_LIB_RUNTIME_GPULIBRARY_H

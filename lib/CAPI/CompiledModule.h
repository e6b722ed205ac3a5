//===- CompiledModule.h - What a ke_module holds ----------------*- C++ -*-===//
//
// The C++ side of ke_module and ke_function (ke-c/ke.h): the object file
// that compileModule emitted, the signature of every public function (the
// object alone does not say what shapes its memref arguments have), and the
// object linked into an ORC LLJIT. Kept apart from the C wrappers so that
// saving, loading and calling are plain C++ with llvm::Expected errors.
//
//===----------------------------------------------------------------------===//
#ifndef KE_CAPI_COMPILEDMODULE_H
#define KE_CAPI_COMPILEDMODULE_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace ke::capi {

/// One memref argument of a compiled function: static shape, element type.
struct ArgumentType {
  llvm::SmallVector<int64_t> shape;
  /// "f32", "bf16", "i64", ... (getElementTypeName).
  std::string elementType;
};

/// The signature of a public function after results became out-parameters.
struct FunctionSignature {
  std::string name;
  std::vector<ArgumentType> inputs, results;
};

/// What ke_compile and ke_module_load produce.
struct ModuleContents {
  /// The target the object was compiled for (triple and CPU), so that a
  /// file made on another CPU is refused instead of dying on SIGILL.
  std::string triple, chip;
  std::vector<FunctionSignature> functions;
  /// The relocatable object file (x86-64 or AArch64 ELF).
  std::string object;
  /// Remarks of the compile, one per line (empty for a loaded file).
  std::string remarks;
};

/// The artifact file: a first line "ke-cpu-module 1", a second line holding
/// the JSON of `contents` without the object, then the object's bytes.
std::string serializeModule(const ModuleContents &contents);
llvm::Expected<ModuleContents> deserializeModule(llvm::StringRef bytes);

/// `contents` linked into a JIT; function entry points resolved.
class LoadedModule {
public:
  ~LoadedModule();
  /// Links the object into an LLJIT with the process's symbols, LLVM's
  /// OpenMP runtime (opened privately, RTLD_LOCAL) and memrefCopy, and
  /// looks up `_mlir_ciface_<name>` of every function.
  static llvm::Expected<std::unique_ptr<LoadedModule>>
  create(ModuleContents contents);

  const ModuleContents &getContents() const { return contents; }
  /// The C interface entry of function `index`.
  void *getEntry(size_t index) const { return entries[index]; }

private:
  LoadedModule() = default;
  ModuleContents contents;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::vector<void *> entries;
};

/// Checks `descriptors` against `signature` (count, shapes, contiguous
/// strides) and calls `entry` with them.
llvm::Error callFunction(void *entry, const FunctionSignature &signature,
                         void *const *descriptors, size_t count);

} // namespace ke::capi

#endif // KE_CAPI_COMPILEDMODULE_H

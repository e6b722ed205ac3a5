//===- Compile.h - MLIR text to a module the C API can call -----*- C++ -*-===//
//
// ke_compile's work in C++: parse, check that every public function takes
// and returns statically shaped tensors (the caller allocates the results,
// so their shapes must be known before the call), and compile with
// compileModule into an object with results as out-parameters.
//
//===----------------------------------------------------------------------===//
#ifndef KE_CAPI_COMPILE_H
#define KE_CAPI_COMPILE_H

#include "CompiledModule.h"

namespace ke::capi {

/// Compiles `text` for the CPU target `target` with the schedules of the
/// database at `databasePath` (empty: defaults). Errors carry the located
/// diagnostics, as `ke-opt compile` prints them.
llvm::Expected<ModuleContents> compileText(llvm::StringRef text,
                                           llvm::StringRef sourceName,
                                           llvm::StringRef target,
                                           llvm::StringRef databasePath);

} // namespace ke::capi

#endif // KE_CAPI_COMPILE_H

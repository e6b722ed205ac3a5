//===- InputFile.h - Reading MLIR inputs with located errors ----*- C++ -*-===//
#ifndef KE_SUPPORT_INPUTFILE_H
#define KE_SUPPORT_INPUTFILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"

namespace ke {

/// Reads `filename` ("-" for stdin) into `sourceMgr` and parses it as a
/// module. Every failure is reported through `context`'s diagnostics with a
/// location: a missing or unreadable file at the file name, an empty file at
/// line 1, a parse or verifier error where it occurs. Returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp> parseInputFile(llvm::StringRef filename,
                                                 mlir::MLIRContext &context,
                                                 llvm::SourceMgr &sourceMgr);

/// True when `buffer` holds nothing but whitespace: MLIR would parse it as an
/// empty module, which for ke's inputs is always a mistake.
bool isBlankInput(llvm::StringRef buffer);

} // namespace ke

#endif // KE_SUPPORT_INPUTFILE_H

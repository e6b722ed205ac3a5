//===- ExternalTool.h - Running an assembler or linker on bytes -*- C++ -*-===//
//
// Internal to lib/Codegen: ptxas (PTX -> cubin) and ld.lld (AMDGPU object
// -> HSACO) both take one input file and write one output file; this runs
// such a tool on bytes in memory through temporary files.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_CODEGEN_EXTERNALTOOL_H
#define KE_LIB_CODEGEN_EXTERNALTOOL_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace ke {

/// What to run and how to name it in messages.
struct ExternalTool {
  /// The executable.
  std::string program;
  /// The tool's name in messages ("ptxas", "ld.lld").
  std::string name;
  /// Temporary file suffixes of the input and the output.
  std::string inputSuffix, outputSuffix;
  /// What the output is, for "NAME wrote no WHAT".
  std::string outputDescription;
};

/// Writes `input` to a temporary file, runs `tool` with the arguments
/// `makeArgs(inputPath, outputPath)` builds (argv[0] included), and returns
/// the output file's bytes. `log` receives the tool's stdout and stderr; on
/// failure it says what went wrong.
mlir::FailureOr<std::string> runExternalTool(
    const ExternalTool &tool, llvm::StringRef input,
    llvm::function_ref<llvm::SmallVector<std::string>(llvm::StringRef input,
                                                      llvm::StringRef output)>
        makeArgs,
    std::string &log);

} // namespace ke

#endif // KE_LIB_CODEGEN_EXTERNALTOOL_H

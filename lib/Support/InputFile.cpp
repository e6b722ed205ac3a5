//===- InputFile.cpp - Reading MLIR inputs with located errors ------------===//
//
// Map of the Support component:
//   InputFile.cpp     parseInputFile: missing, empty and unparsable inputs
//                     as located errors; parser crashes recovered
//   CrashSafety.cpp   runCrashSafely: an upstream crash becomes an error
//
//===----------------------------------------------------------------------===//

#include "ke/Support/InputFile.h"

#include "ke/Support/CrashSafety.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

using namespace mlir;

bool ke::isBlankInput(llvm::StringRef buffer) { return buffer.trim().empty(); }

OwningOpRef<ModuleOp> ke::parseInputFile(llvm::StringRef filename,
                                         MLIRContext &context,
                                         llvm::SourceMgr &sourceMgr) {
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openInputFile(filename, &message);
  if (!buffer) {
    emitError(FileLineColLoc::get(&context, filename, 0, 0))
        << message;
    return nullptr;
  }
  bool blank = isBlankInput(buffer->getBuffer());
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  if (blank) {
    emitError(FileLineColLoc::get(&context, filename, 1, 1))
        << "input file is empty: expected MLIR operations";
    return nullptr;
  }
  OwningOpRef<ModuleOp> module;
  if (!runCrashSafely([&] {
        module = parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
      })) {
    // The parser's own diagnostics (printed already) locate the bad input.
    emitError(FileLineColLoc::get(&context, filename, 0, 0))
        << "MLIR's parser crashed on this malformed input (an upstream bug); "
           "see the errors above for where the input is wrong";
    return nullptr;
  }
  return module;
}

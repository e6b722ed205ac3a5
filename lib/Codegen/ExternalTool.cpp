//===- ExternalTool.cpp - Running an assembler or linker on bytes ---------===//

#include "ExternalTool.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace ke;

FailureOr<std::string> ke::runExternalTool(
    const ExternalTool &tool, llvm::StringRef input,
    llvm::function_ref<llvm::SmallVector<std::string>(llvm::StringRef,
                                                      llvm::StringRef)>
        makeArgs,
    std::string &log) {
  llvm::SmallString<128> inputPath, outputPath, messages;
  if (llvm::sys::fs::createTemporaryFile("ke-kernel", tool.inputSuffix,
                                         inputPath) ||
      llvm::sys::fs::createTemporaryFile("ke-kernel", tool.outputSuffix,
                                         outputPath) ||
      llvm::sys::fs::createTemporaryFile(("ke-" + tool.name).c_str(), "log",
                                         messages)) {
    log = "cannot create temporary files for " + tool.name;
    return failure();
  }
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(inputPath);
    llvm::sys::fs::remove(outputPath);
    llvm::sys::fs::remove(messages);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(inputPath, ec);
    if (ec) {
      log = "cannot write " + inputPath.str().str();
      return failure();
    }
    os << input;
  }
  llvm::SmallVector<std::string> argStorage = makeArgs(inputPath, outputPath);
  llvm::SmallVector<llvm::StringRef> args(argStorage.begin(),
                                          argStorage.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, messages,
                                                messages};
  std::string error;
  int code = llvm::sys::ExecuteAndWait(tool.program, args, std::nullopt,
                                       redirects, /*SecondsToWait=*/120, 0,
                                       &error);
  if (auto text = llvm::MemoryBuffer::getFile(messages))
    log = (*text)->getBuffer().str();
  if (code != 0) {
    log = llvm::formatv("{0} failed ({1}): {2}\n{3}", tool.name, code, error,
                        log);
    return failure();
  }
  auto output = llvm::MemoryBuffer::getFile(outputPath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!output) {
    log += "\n" + tool.name + " wrote no " + tool.outputDescription;
    return failure();
  }
  return (*output)->getBuffer().str();
}

//===- ke-opt.cpp - The ke driver -----------------------------------------===//
//
// `ke-opt <subcommand> ...` runs one of ke's subcommands (workloads, target,
// tune, compile, bench, db); anything else is an mlir-opt with ke's dialects
// and passes. See docs/user-guide.md.
//
//===----------------------------------------------------------------------===//

#include "Subcommands.h"

#include "ke/Codegen/LLVMTargets.h"
#include "ke/InitAll/InitAll.h"
#include "ke/Support/CrashSafety.h"
#include "ke/Support/InputFile.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;

namespace {

/// A first argument that names no subcommand, option or existing file and
/// does not look like a path is a mistyped subcommand, not an input file.
bool looksLikeSubcommand(llvm::StringRef arg) {
  return !arg.starts_with("-") && !arg.contains('.') && !arg.contains('/') &&
         !llvm::sys::fs::exists(arg);
}

int runMlirOptMode(int argc, char **argv) {
  DialectRegistry registry;
  ke::registerKeDialects(registry);
  ke::initializeKeLLVMTargets();
  llvm::cl::SetVersionPrinter(ke::printVersion);
  auto [inputFilename, outputFilename] =
      registerAndParseCLIOptions(argc, argv, "ke-opt: ke's MLIR optimizer driver\n"
                                             "  (or `ke-opt <subcommand> --help`)",
                                 registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &message);
  if (!input) {
    llvm::WithColor::error(llvm::errs(), "ke-opt") << message << '\n';
    return 1;
  }
  // An empty input would print an empty module and succeed; for a build
  // pipeline that is always a mistake (a truncated or misnamed file). Same
  // form as the located diagnostics of the subcommands.
  if (ke::isBlankInput(input->getBuffer())) {
    llvm::errs() << inputFilename << ":1:1: error: input file is empty: "
                 << "expected MLIR operations\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &message);
  if (!output) {
    llvm::WithColor::error(llvm::errs(), "ke-opt") << message << '\n';
    return 1;
  }
  LogicalResult result = failure();
  if (!ke::runCrashSafely([&] {
        result = MlirOptMain(output->os(), std::move(input), registry, config);
      })) {
    llvm::WithColor::error(llvm::errs(), "ke-opt")
        << "MLIR crashed while processing '" << inputFilename
        << "' (an upstream bug; malformed input triggers some): see the "
           "errors above\n";
    return 1;
  }
  if (failed(result))
    return 1;
  output->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // Textual pipelines (the lowering of candidates) need the passes by name
  // in every mode, not only in mlir-opt mode.
  ke::registerKePasses();
  llvm::StringRef first = argc > 1 ? argv[1] : "";

  if (first == "--version" || first == "-version") {
    ke::printVersion(llvm::outs());
    return 0;
  }

  for (const ke::Subcommand &sub : ke::getSubcommands()) {
    if (first != sub.command->getName())
      continue;
    llvm::cl::SetVersionPrinter(ke::printVersion);
    llvm::cl::ParseCommandLineOptions(argc, argv, "ke-opt: ke's driver\n");
    return sub.run();
  }

  if (!first.empty() && looksLikeSubcommand(first)) {
    llvm::SmallVector<llvm::StringRef> names;
    for (const ke::Subcommand &sub : ke::getSubcommands())
      names.push_back(sub.command->getName());
    llvm::WithColor::error(llvm::errs(), "ke-opt")
        << "unknown subcommand '" << first << "'; expected one of "
        << llvm::join(names, ", ")
        << ", or an input file for mlir-opt mode (see ke-opt --help)\n";
    return 1;
  }
  return runMlirOptMode(argc, argv);
}

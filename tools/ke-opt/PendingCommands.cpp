//===- PendingCommands.cpp - Subcommands that later issues deliver --------===//
//
// compile already parses and checks its options, so a
// wrong target or a missing input is reported exactly as it will be later,
// and then say plainly that the work itself is not implemented yet.
//
//===----------------------------------------------------------------------===//

#include "Subcommands.h"
#include "ToolSupport.h"

#include "ke/Target/Target.h"

#include "llvm/Support/FileSystem.h"

namespace cl = llvm::cl;

static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"),
                                       cl::sub(ke::getCompileCommand()));

/// Checks what every pending subcommand shares, then reports that it is not
/// implemented. Returns the exit code.
static int reportPending(llvm::StringRef name, llvm::StringRef issue) {
  if (name != "db") {
    if (!ke::requireInputFiles(name))
      return 1;
    for (const std::string &file : ke::inputFiles)
      if (file != "-" && !llvm::sys::fs::exists(file)) {
        ke::subcommandError(name)
            << file << ": cannot open input file: No such file or directory\n";
        return 1;
      }
    llvm::Expected<ke::TargetDescription> target = ke::parseTarget(ke::targetOption);
    if (!target) {
      ke::subcommandError(name) << llvm::toString(target.takeError()) << '\n';
      return 1;
    }
  }
  ke::subcommandError(name) << "not implemented yet (" << issue << ")\n";
  return 1;
}

int ke::runCompileCommand() { return reportPending("compile", "issue #4"); }


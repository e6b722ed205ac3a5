//===- PendingCommands.cpp - Subcommands that later issues deliver --------===//
//
// tune, compile, bench and db already parse and check their options, so a
// wrong target or a missing input is reported exactly as it will be later,
// and then say plainly that the work itself is not implemented yet.
//
//===----------------------------------------------------------------------===//

#include "Subcommands.h"

#include "ke/Target/Target.h"

#include "llvm/Support/FileSystem.h"

namespace cl = llvm::cl;

llvm::cl::SubCommand ke::tuneCommand(
    "tune", "Search schedules for the workloads of MLIR files (not "
            "implemented yet: issues #3 and #4)");
llvm::cl::SubCommand ke::compileCommand(
    "compile", "Apply the best known schedules and emit code (not implemented "
               "yet: issue #4)");
llvm::cl::SubCommand ke::benchCommand(
    "bench", "Time tuned, default and reference code per workload (not "
             "implemented yet: issue #3)");
llvm::cl::SubCommand ke::dbCommand(
    "db", "Read and move tuning records: list, best, export, import (not "
          "implemented yet: issue #4)");

static cl::list<std::string> inputFiles(cl::Positional, cl::ZeroOrMore,
                                        cl::desc("<input.mlir>..."),
                                        cl::sub(ke::tuneCommand),
                                        cl::sub(ke::compileCommand),
                                        cl::sub(ke::benchCommand));
static cl::opt<std::string> targetSpec("target", cl::desc("Target (see "
                                                          "`ke-opt target "
                                                          "--help`)"),
                                       cl::init("cpu"),
                                       cl::sub(ke::tuneCommand),
                                       cl::sub(ke::compileCommand),
                                       cl::sub(ke::benchCommand));
static cl::opt<std::string> dbPath("db", cl::desc("Tuning database (default "
                                                  "$KE_DB or ke-tuning.db)"),
                                   cl::sub(ke::tuneCommand),
                                   cl::sub(ke::compileCommand),
                                   cl::sub(ke::benchCommand),
                                   cl::sub(ke::dbCommand));
static cl::opt<unsigned> trials("trials", cl::desc("Measured candidates"),
                                cl::init(1000), cl::sub(ke::tuneCommand));
static cl::opt<unsigned> explore("explore",
                                 cl::desc("Candidates explored before "
                                          "coordinate descent"),
                                 cl::init(300), cl::sub(ke::tuneCommand));
static cl::opt<uint64_t> seed("seed", cl::desc("Random seed"), cl::init(0),
                              cl::sub(ke::tuneCommand));
static cl::opt<unsigned> jobs("jobs", cl::desc("Parallel builds"),
                              cl::init(0), cl::sub(ke::tuneCommand));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"),
                                       cl::sub(ke::compileCommand));
static cl::list<std::string> dbArgs(cl::Positional, cl::ZeroOrMore,
                                    cl::desc("list|best|export|import "
                                             "[args...]"),
                                    cl::sub(ke::dbCommand));

/// Checks what every pending subcommand shares, then reports that it is not
/// implemented. Returns the exit code.
static int reportPending(llvm::StringRef name, llvm::StringRef issue) {
  if (name != "db") {
    if (inputFiles.empty()) {
      ke::subcommandError(name) << "no input files\n";
      return 1;
    }
    for (const std::string &file : inputFiles)
      if (file != "-" && !llvm::sys::fs::exists(file)) {
        ke::subcommandError(name)
            << file << ": cannot open input file: No such file or directory\n";
        return 1;
      }
    llvm::Expected<ke::TargetDescription> target = ke::parseTarget(targetSpec);
    if (!target) {
      ke::subcommandError(name) << llvm::toString(target.takeError()) << '\n';
      return 1;
    }
  }
  ke::subcommandError(name) << "not implemented yet (" << issue << ")\n";
  return 1;
}

int ke::runTuneCommand() { return reportPending("tune", "issues #3 and #4"); }
int ke::runCompileCommand() { return reportPending("compile", "issue #4"); }
int ke::runBenchCommand() { return reportPending("bench", "issue #3"); }
int ke::runDbCommand() { return reportPending("db", "issue #4"); }

llvm::ArrayRef<ke::Subcommand> ke::getSubcommands() {
  static const Subcommand subcommands[] = {
      {&workloadsCommand, runWorkloadsCommand},
      {&targetCommand, runTargetCommand},
      {&tuneCommand, runTuneCommand},
      {&compileCommand, runCompileCommand},
      {&benchCommand, runBenchCommand},
      {&dbCommand, runDbCommand}};
  return subcommands;
}

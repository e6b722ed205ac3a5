//===- Subcommands.h - ke-opt's subcommands ---------------------*- C++ -*-===//
//
// Each subcommand is an llvm::cl::SubCommand with its own options, defined in
// its own file, and a run function that returns the process exit code.
//
//===----------------------------------------------------------------------===//
#ifndef KE_TOOLS_KE_OPT_SUBCOMMANDS_H
#define KE_TOOLS_KE_OPT_SUBCOMMANDS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

namespace ke {

/// A driver subcommand: its cl::SubCommand and what runs when it is chosen.
struct Subcommand {
  llvm::cl::SubCommand *command;
  int (*run)();
};

/// All subcommands, in the order `--help` lists them.
llvm::ArrayRef<Subcommand> getSubcommands();

/// Prints ke's version, the LLVM/MLIR it was built with and its backends.
void printVersion(llvm::raw_ostream &os);

/// The error prefix of a subcommand: "ke-opt <name>: error: ".
llvm::raw_ostream &subcommandError(llvm::StringRef name);

int runWorkloadsCommand();
int runSketchesCommand();
int runTargetCommand();
int runTuneCommand();
int runCompileCommand();
int runBenchCommand();
int runDbCommand();

/// The subcommands. Function-local statics, so that options in any file can
/// name them during static initialization whatever the order of files.
llvm::cl::SubCommand &getWorkloadsCommand();
llvm::cl::SubCommand &getTargetCommand();
llvm::cl::SubCommand &getSketchesCommand();
llvm::cl::SubCommand &getTuneCommand();
llvm::cl::SubCommand &getCompileCommand();
llvm::cl::SubCommand &getBenchCommand();
llvm::cl::SubCommand &getDbCommand();

/// Options several subcommands share (defined in Subcommands.cpp).
extern llvm::cl::list<std::string> inputFiles;
extern llvm::cl::opt<std::string> targetOption;
extern llvm::cl::opt<bool> allowTF32Option;
extern llvm::cl::opt<std::string> dbOption;
extern llvm::cl::opt<uint64_t> seedOption;
/// --no-prepare-graph: skip the graph preparation (ke/Graph) of inputs.
extern llvm::cl::opt<bool> noPrepareGraphOption;
/// --demote-f64: the graph preparation's f64 demotion (on by default).
extern llvm::cl::opt<bool> demoteF64Option;

} // namespace ke

#endif // KE_TOOLS_KE_OPT_SUBCOMMANDS_H

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
int runTargetCommand();
int runTuneCommand();
int runCompileCommand();
int runBenchCommand();
int runDbCommand();

extern llvm::cl::SubCommand workloadsCommand;
extern llvm::cl::SubCommand targetCommand;
extern llvm::cl::SubCommand tuneCommand;
extern llvm::cl::SubCommand compileCommand;
extern llvm::cl::SubCommand benchCommand;
extern llvm::cl::SubCommand dbCommand;

} // namespace ke

#endif // KE_TOOLS_KE_OPT_SUBCOMMANDS_H

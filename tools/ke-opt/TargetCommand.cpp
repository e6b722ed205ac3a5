//===- TargetCommand.cpp - ke-opt target ----------------------------------===//

#include "Subcommands.h"

#include "ke/Target/Target.h"

#include "llvm/Support/JSON.h"

namespace cl = llvm::cl;

static cl::list<std::string> targetSpecs(cl::Positional, cl::ZeroOrMore,
                                         cl::desc("<target>..."),
                                         cl::sub(ke::getTargetCommand()));

int ke::runTargetCommand() {
  llvm::SmallVector<std::string> specs(targetSpecs.begin(), targetSpecs.end());
  if (specs.empty())
    specs.push_back("cpu");
  int status = 0;
  for (const std::string &spec : specs) {
    llvm::Expected<TargetDescription> target = parseTarget(spec);
    if (!target) {
      subcommandError("target") << llvm::toString(target.takeError()) << '\n';
      status = 1;
      continue;
    }
    llvm::outs() << toJSON(*target) << '\n';
  }
  return status;
}

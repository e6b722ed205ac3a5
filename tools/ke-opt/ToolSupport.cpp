//===- ToolSupport.cpp - What several subcommands share -------------------===//

#include "ToolSupport.h"
#include "Subcommands.h"

#include "ke/InitAll/InitAll.h"
#include "ke/Support/InputFile.h"

#include "mlir/IR/MLIRContext.h"

using namespace mlir;
using namespace ke;

LoadedInputs ke::loadInputs(llvm::ArrayRef<std::string> files,
                            MLIRContext &context) {
  LoadedInputs inputs;
  for (const std::string &file : files) {
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
    OwningOpRef<ModuleOp> module = parseInputFile(file, context, sourceMgr);
    if (!module) {
      inputs.failed = true;
      continue;
    }
    collectWorkloads(*module, inputs.workloads);
    inputs.modules.push_back(std::move(module));
  }
  return inputs;
}

std::optional<TargetDescription>
ke::parseTargetOption(llvm::StringRef command) {
  llvm::Expected<TargetDescription> target = parseTarget(targetOption);
  if (!target) {
    subcommandError(command) << llvm::toString(target.takeError()) << '\n';
    return std::nullopt;
  }
  return *target;
}

bool ke::requireInputFiles(llvm::StringRef command) {
  if (!inputFiles.empty())
    return true;
  subcommandError(command) << "no input files\n";
  return false;
}

std::unique_ptr<MLIRContext> ke::createToolContext() {
  DialectRegistry registry;
  registerKeDialects(registry);
  auto context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  return context;
}

std::string ke::getDatabasePath() {
  if (!dbOption.empty())
    return dbOption;
  if (const char *env = std::getenv("KE_DB"); env && *env)
    return env;
  return "ke-tuning.db";
}

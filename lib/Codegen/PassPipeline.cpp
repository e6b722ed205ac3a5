//===- PassPipeline.cpp - Pass pipelines built in C++ ---------------------===//

#include "ke/Codegen/PassPipeline.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

void ke::addPasses(OpPassManager &pm, llvm::ArrayRef<PassStep> pipeline) {
  for (const PassStep &step : pipeline) {
    if (step.nestedUnder.empty())
      pm.addPass(step.make());
    else
      pm.nest(step.nestedUnder).addPass(step.make());
  }
}

std::string ke::printPipeline(llvm::ArrayRef<PassStep> pipeline) {
  // One pass manager per step: consecutive nested steps would otherwise
  // share one nested pass manager and print as one element.
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const PassStep &step : pipeline) {
    if (!text.empty())
      os << ",";
    if (step.nestedUnder.empty()) {
      step.make()->printAsTextualPipeline(os);
    } else {
      OpPassManager nested(step.nestedUnder);
      nested.addPass(step.make());
      nested.printAsTextualPipeline(os);
    }
  }
  return text;
}

std::string ke::getPassArgument(const PassStep &step) {
  return step.make()->getArgument().str();
}

LogicalResult ke::runPipeline(ModuleOp module,
                              llvm::ArrayRef<PassStep> pipeline) {
  PassManager pm(module->getName());
  addPasses(pm, pipeline);
  return pm.run(module);
}

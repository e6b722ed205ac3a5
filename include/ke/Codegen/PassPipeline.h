//===- PassPipeline.h - Pass pipelines built in C++ -------------*- C++ -*-===//
//
// ke's lowering pipelines are lists of pass factories, built in C++ from
// upstream's create*Pass() functions (as IREE's LLVMGPU pipelines are), not
// parsed from text. So nothing has to be registered globally before a
// pipeline runs (Codegen registers nothing), and a pipeline's text, for the
// pipeline hash and for docs, is what its passes print, options included:
// it cannot drift from what runs.
//
//===----------------------------------------------------------------------===//
#ifndef KE_CODEGEN_PASSPIPELINE_H
#define KE_CODEGEN_PASSPIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <memory>
#include <string>

namespace ke {

/// One pass of a pipeline: makes a new instance each time (a pass manager
/// owns its passes), to run on the module or nested on every op named
/// `nestedUnder` ("gpu.module") in it.
struct PassStep {
  std::function<std::unique_ptr<mlir::Pass>()> make;
  llvm::StringRef nestedUnder = "";
};

using PassPipeline = llvm::SmallVector<PassStep>;

/// Adds a new instance of every pass of `pipeline` to `pm`, in order.
void addPasses(mlir::OpPassManager &pm, llvm::ArrayRef<PassStep> pipeline);

/// `pipeline` as mlir-opt's --pass-pipeline would take it, without the
/// builtin.module anchor: every pass with all its options.
std::string printPipeline(llvm::ArrayRef<PassStep> pipeline);

/// The mlir-opt name of the pass a step makes ("canonicalize").
std::string getPassArgument(const PassStep &step);

/// Runs `pipeline` on `module`.
mlir::LogicalResult runPipeline(mlir::ModuleOp module,
                                llvm::ArrayRef<PassStep> pipeline);

/// A step for a pass without options: `step(mlir::createCSEPass)`.
template <typename CreateFn> PassStep step(CreateFn create) {
  return PassStep{[create] { return create(); }};
}

} // namespace ke

#endif // KE_CODEGEN_PASSPIPELINE_H

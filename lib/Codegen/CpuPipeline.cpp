//===- CpuPipeline.cpp - From a scheduled kernel to LLVM IR on CPUs -------===//

#include "ke/Codegen/CpuPipeline.h"
#include "ke/Codegen/PipelineHash.h"

#include "ke/InitAll/InitAll.h"

#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "ke/Config.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SHA256.h"

using namespace mlir;

LogicalResult ke::applySchedule(ModuleOp kernel, ModuleOp script) {
  Operation *entry = transform::detail::findTransformEntryPoint(
      script, script, transform::TransformDialect::kTransformEntryPointSymbolName);
  if (!entry)
    return script.emitError("the schedule has no @__transform_main");
  transform::TransformOptions options;
  options.enableExpensiveChecks(false);
  return transform::applyTransformNamedSequence(kernel, entry, script, options);
}

std::string ke::getCpuLoweringPipeline(const CpuLoweringOptions &options) {
  std::string forall =
      options.numThreads > 0
          ? llvm::formatv("scf-forall-to-parallel,convert-scf-to-openmp{{"
                          "num-threads={0}},",
                          options.numThreads)
                .str()
          : "scf-forall-to-for,";
  std::string linalgLoops =
      options.referenceThreads > 0
          ? llvm::formatv("convert-linalg-to-parallel-loops,"
                          "convert-scf-to-openmp{{num-threads={0}},",
                          options.referenceThreads)
                .str()
          : "convert-linalg-to-loops,";
  return "one-shot-bufferize{bufferize-function-boundaries "
         "function-boundary-type-conversion=identity-layout-map},"
         "canonicalize,cse,"
         // Fully unrolled transfers need no stack temporaries: the loop form
         // allocas a buffer per iteration and overflows the stack.
         "convert-vector-to-scf{full-unroll=true}," +
         linalgLoops + "lower-affine," +
         forall +
         "expand-strided-metadata,lower-affine,finalize-memref-to-llvm,"
         "convert-scf-to-cf,convert-vector-to-llvm,convert-math-to-llvm,"
         "convert-arith-to-llvm,convert-index-to-llvm,convert-openmp-to-llvm,"
         "convert-func-to-llvm,convert-cf-to-llvm,convert-ub-to-llvm,"
         "reconcile-unrealized-casts";
}

std::string ke::getCpuPipelineHash() {
  // The thread count only changes an attribute, not the code's structure.
  CpuLoweringOptions options;
  options.numThreads = 1;
  return hashLoweringPipeline(getCpuLoweringPipeline(options));
}

LogicalResult ke::lowerKernelToLLVM(ModuleOp kernel,
                                    const CpuLoweringOptions &options) {
  registerKePasses(); // the pipeline names passes; idempotent
  PassManager pm(kernel->getName());
  std::string pipeline = getCpuLoweringPipeline(options);
  std::string message;
  llvm::raw_string_ostream os(message);
  if (failed(parsePassPipeline(pipeline, pm, os)))
    return kernel.emitError("bad CPU pipeline: ")
           << message;
  return pm.run(kernel);
}

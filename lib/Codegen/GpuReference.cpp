//===- GpuReference.cpp - The unscheduled kernel on the device ------------===//

#include "ke/Codegen/GpuReference.h"

#include "ke/Codegen/CpuPipeline.h"
#include "ke/Codegen/GpuPipeline.h"
#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kReferenceScript = R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %softmax = transform.structured.match ops{["linalg.softmax"]} in %root : (!transform.any_op) -> !transform.any_op
    %parts = transform.structured.decompose_interface %softmax : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
)mlir";

} // namespace

llvm::StringRef ke::getReferenceScript() { return kReferenceScript; }

std::unique_ptr<Pass> ke::createKernelBufferizePass() {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  return bufferization::createOneShotBufferizePass(bufferize);
}

ke::PassPipeline ke::getGpuReferenceMappingPasses() {
  return {step([] { return createGpuReferenceSplitReductionsPass(); }),
          step(createKernelBufferizePass),
          step([] { return createCanonicalizerPass(); }),
          step([] { return createCSEPass(); }),
          step([] { return createGpuReferenceLaunchesPass(); })};
}

FailureOr<ke::GpuKernelBinary>
ke::lowerReferenceKernelToGpuBinary(ModuleOp kernel,
                                    const TargetDescription &target) {
  OwningOpRef<ModuleOp> script = parseSourceString<ModuleOp>(
      kReferenceScript, ParserConfig(kernel.getContext()));
  if (!script || failed(applySchedule(kernel, *script)) ||
      failed(runPipeline(kernel, getGpuReferenceMappingPasses())))
    return failure();
  return lowerKernelToGpuBinary(kernel, target);
}

//===- CpuPipeline.cpp - From a scheduled kernel to LLVM IR on CPUs -------===//

#include "ke/Codegen/CpuPipeline.h"
#include "ke/Codegen/GpuReference.h"
#include "ke/Codegen/Passes.h"
#include "ke/Codegen/PipelineHash.h"


#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

LogicalResult ke::applySchedule(ModuleOp kernel, ModuleOp script) {
  // Scripts run ke's passes by name (transform.apply_registered_pass in
  // cpu.softmax's): registered here, since a library or tool that applies
  // schedules need not register ke's passes itself.
  static const bool registered = [] {
    if (!PassInfo::lookup("ke-fresh-unread-inits"))
      registerFreshUnreadInitsPass();
    return true;
  }();
  (void)registered;
  Operation *entry = transform::detail::findTransformEntryPoint(
      script, script, transform::TransformDialect::kTransformEntryPointSymbolName);
  if (!entry)
    return script.emitError("the schedule has no @__transform_main");
  transform::TransformOptions options;
  options.enableExpensiveChecks(false);
  return transform::applyTransformNamedSequence(kernel, entry, script, options);
}

ke::PassPipeline
ke::getCpuLoweringPasses(const CpuLoweringOptions &options) {
  PassPipeline passes;
  auto add = [&](std::function<std::unique_ptr<Pass>()> make) {
    passes.push_back(PassStep{std::move(make)});
  };
  // Before bufferization, while math ops are still in linalg bodies or
  // vectors of the schedule's tiles: the rewrites are elementwise either way.
  add([] { return createExpandMathPass(); });
  add(createKernelBufferizePass);
  add([] { return createCanonicalizerPass(); });
  add([] { return createCSEPass(); });
  // Bufferization allocates the temporaries a schedule leaves (a row
  // block's exponentials, a copy before a write) and frees none: without
  // this, each call of a kernel leaked them (64 MiB per call of the suite's
  // 4096 x 4096 softmax) and paid fresh pages for them on every call.
  // Upstream's buffer-deallocation-pipeline, less its realloc expansion
  // (nothing here reallocates); returned buffers stay the caller's.
  add([] { return bufferization::createOwnershipBasedBufferDeallocationPass(); });
  add([] { return createCanonicalizerPass(); });
  add([] { return bufferization::createBufferDeallocationSimplificationPass(); });
  add([] { return bufferization::createLowerDeallocationsPass(); });
  add([] { return createCSEPass(); });
  add([] { return createCanonicalizerPass(); });
  // bufferization.clone (a returned buffer the callee does not own) as an
  // alloc and a copy.
  add([] { return createConvertBufferizationToMemRefPass(); });
  // Fully unrolled transfers need no stack temporaries: the loop form
  // allocas a buffer per iteration and overflows the stack.
  add([] {
    return createConvertVectorToSCFPass(
        VectorTransferToSCFOptions().enableFullUnroll());
  });
  add([] { return createScalarizeBoolTransfersPass(); });
  if (unsigned threads = options.referenceThreads) {
    add([] { return createConvertLinalgToParallelLoopsPass(); });
    add([threads] { return createConvertSCFToOpenMPPass({threads}); });
  } else {
    add([] { return createConvertLinalgToLoopsPass(); });
  }
  add([] { return createLowerAffinePass(); });
  if (unsigned threads = options.numThreads) {
    add([] { return createForallToParallelLoopPass(); });
    add([threads] { return createConvertSCFToOpenMPPass({threads}); });
  } else {
    add([] { return createForallToForLoopPass(); });
  }
  add([] { return memref::createExpandStridedMetadataPass(); });
  add([] { return createLowerAffinePass(); });
  add([] { return createFinalizeMemRefToLLVMConversionPass(); });
  add([] { return createSCFToControlFlowPass(); });
  add([] { return createConvertVectorToLLVMPass(); });
  add([] { return createConvertMathToLLVMPass(); });
  add([] { return createArithToLLVMConversionPass(); });
  add([] { return createConvertIndexToLLVMPass(); });
  add([] { return createConvertOpenMPToLLVMPass(); });
  add([] { return createConvertFuncToLLVMPass(); });
  add([] { return createConvertControlFlowToLLVMPass(); });
  add([] { return createUBToLLVMConversionPass(); });
  add([] { return createReconcileUnrealizedCastsPass(); });
  return passes;
}

std::string ke::getCpuLoweringPipeline(const CpuLoweringOptions &options) {
  return printPipeline(getCpuLoweringPasses(options));
}

std::string ke::getCpuPipelineHash() {
  // The thread count only changes an attribute, not the code's structure.
  CpuLoweringOptions options;
  options.numThreads = 1;
  return hashLoweringPipeline(getCpuLoweringPipeline(options));
}

LogicalResult ke::lowerKernelToLLVM(ModuleOp kernel,
                                    const CpuLoweringOptions &options) {
  return runPipeline(kernel, getCpuLoweringPasses(options));
}

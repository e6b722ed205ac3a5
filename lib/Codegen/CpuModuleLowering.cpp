//===- CpuModuleLowering.cpp - A whole module to LLVM on CPUs -------------===//

#include "ke/Codegen/CpuModuleLowering.h"

#include "ke/Codegen/CpuPipeline.h"

#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace ke;

namespace {

/// The thread count a loop's location carries (see tagThreadLoops), or 0.
int64_t getTaggedThreads(Location loc) {
  auto fused = dyn_cast<FusedLoc>(loc);
  auto tag = fused ? dyn_cast_or_null<DictionaryAttr>(fused.getMetadata())
                   : DictionaryAttr();
  auto threads = tag ? tag.getAs<IntegerAttr>(kNumThreadsAttr) : IntegerAttr();
  return threads ? threads.getInt() : 0;
}

/// Bufferization rebuilds scf.forall ops and drops their attributes, but
/// keeps their locations; so the thread count moves into the location until
/// the loop has become an omp.parallel.
void tagThreadLoops(ModuleOp module) {
  module.walk([](scf::ForallOp forall) {
    auto threads = forall->getAttrOfType<IntegerAttr>(kNumThreadsAttr);
    if (!threads)
      return;
    MLIRContext *context = forall->getContext();
    auto tag = DictionaryAttr::get(context,
                                   {NamedAttribute(kNumThreadsAttr, threads)});
    forall->setLoc(FusedLoc::get(context, {forall->getLoc()}, tag));
    forall->removeAttr(kNumThreadsAttr);
  });
}

/// Decomposes the ops that convert-linalg-to-loops cannot lower
/// (linalg.softmax) into the generics that define them, as the reference
/// lowering of candidates does.
LogicalResult decomposeAggregatedOps(ModuleOp module) {
  SmallVector<linalg::AggregatedOpInterface> ops;
  module.walk([&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
  IRRewriter rewriter(module.getContext());
  for (linalg::AggregatedOpInterface op : ops) {
    rewriter.setInsertionPoint(op);
    FailureOr<SmallVector<Value>> results = op.decomposeOperation(rewriter);
    if (failed(results))
      return op->emitError("cannot decompose this op into loops");
    rewriter.replaceOp(op, *results);
  }
  return success();
}

/// scf.forall loops with a thread count become scf.parallel loops (OpenMP
/// after convert-scf-to-openmp) when `openmp` is set, the others sequential
/// scf.for loops. Returns whether any parallel loop was made.
FailureOr<bool> convertForallLoops(ModuleOp module, bool openmp) {
  SmallVector<scf::ForallOp> foralls;
  module.walk([&](scf::ForallOp forall) { foralls.push_back(forall); });
  IRRewriter rewriter(module.getContext());
  bool parallel = false;
  for (scf::ForallOp forall : foralls) {
    rewriter.setInsertionPoint(forall);
    bool threads = openmp && getTaggedThreads(forall.getLoc()) > 0;
    if (failed(threads ? scf::forallToParallelLoop(rewriter, forall)
                       : scf::forallToForLoop(rewriter, forall)))
      return forall.emitError("cannot lower this scf.forall to loops");
    parallel |= threads;
  }
  return parallel;
}

/// Gives each omp.parallel the thread count of the loop it came from, and
/// restores the locations tagThreadLoops tagged.
void applyThreadCounts(ModuleOp module) {
  module.walk([](omp::ParallelOp parallel) {
    int64_t threads = getTaggedThreads(parallel.getLoc());
    if (threads <= 0 || !parallel.getNumThreadsMutable().empty())
      return;
    OpBuilder builder(parallel);
    Value count = LLVM::ConstantOp::create(builder, parallel.getLoc(),
                                           builder.getI32IntegerAttr(threads));
    parallel.getNumThreadsMutable().assign(count);
  });
  module.walk([](Operation *op) {
    if (getTaggedThreads(op->getLoc()) > 0)
      op->setLoc(cast<FusedLoc>(op->getLoc()).getLocations().front());
  });
}

/// Runs `steps` on `module`; with `resultsToOutParams`,
/// buffer-results-to-out-params follows one-shot-bufferize (before the
/// pipeline's buffer deallocation: functions that return tensors then
/// write into buffers their callers pass).
LogicalResult runPasses(ModuleOp module, ArrayRef<PassStep> steps,
                        bool resultsToOutParams = false) {
  PassManager pm(module->getName());
  for (const PassStep &step : steps) {
    addPasses(pm, step);
    if (resultsToOutParams && getPassArgument(step) == "one-shot-bufferize") {
      bufferization::BufferResultsToOutParamsPassOptions outParams;
      outParams.hoistStaticAllocs = true;
      outParams.modifyPublicFunctions = true;
      pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
    }
  }
  return pm.run(module);
}

/// Finds the step of the pass named `argument` in `steps`.
PassStep *findPass(PassPipeline &steps, StringRef argument) {
  auto it = llvm::find_if(steps, [&](const PassStep &step) {
    return getPassArgument(step) == argument;
  });
  return it == steps.end() ? nullptr : &*it;
}

} // namespace

LogicalResult ke::lowerModuleToLLVM(ModuleOp module,
                                    const ModuleLoweringOptions &options) {
  if (failed(decomposeAggregatedOps(module)))
    return failure();
  if (options.emitCInterface)
    module.walk([](func::FuncOp func) {
      if (func.isPublic() && !func.isExternal())
        func->setAttr("llvm.emit_c_interface",
                      UnitAttr::get(func.getContext()));
    });
  tagThreadLoops(module);

  // The kernel pipeline without threads, split where its forall lowering is.
  CpuLoweringOptions sequential;
  PassPipeline steps = getCpuLoweringPasses(sequential);
  if (options.scalableVectors) {
    PassStep *cse = findPass(steps, "cse");
    if (!cse)
      return module.emitError("the CPU pipeline has no cse step; "
                              "lowerModuleToLLVM needs updating");
    steps.insert(std::next(cse),
                 PassStep{[] { return createCanonicalizerPass(); }});
  }
  PassStep *forall = findPass(steps, "scf-forall-to-for");
  if (!forall)
    return module.emitError("the CPU pipeline has no scf-forall-to-for step; "
                            "lowerModuleToLLVM needs updating");
  if (failed(runPasses(module, ArrayRef<PassStep>(steps.begin(), forall),
                       options.resultsToOutParams)))
    return failure();
  FailureOr<bool> parallel = convertForallLoops(module, options.openmp);
  if (failed(parallel))
    return failure();
  if (*parallel) {
    PassStep openmp{[] { return createConvertSCFToOpenMPPass(); }};
    if (failed(runPasses(module, openmp)))
      return failure();
  }
  applyThreadCounts(module);
  return runPasses(module, ArrayRef<PassStep>(std::next(forall), steps.end()));
}

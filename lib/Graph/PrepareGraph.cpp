//===- PrepareGraph.cpp - The whole graph preparation ---------------------===//
//
// prepareGraph (ke/Graph/GraphPreparation.h) and ke-prepare-graph: the
// steps of ke/Graph/Passes.td in one pipeline, built from their create
// functions, so that libraries run it without registering passes. Order
// matters: a bias in an accumulator's init becomes an elementwise add
// first, data movement is folded into its consumers next (a transpose
// or broadcast between two generics blocks their fusion), dead results go
// before fusion (an extra result is an extra use), and chains are fused
// last (with another sweep of dead results after).
//
//===----------------------------------------------------------------------===//

#include "ke/Graph/GraphPreparation.h"
#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Linalg/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-prepare-graph"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_PREPAREGRAPHPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

void ke::buildGraphPreparationPipeline(OpPassManager &pm,
                                       const GraphPreparationOptions &options) {
  // Elementwise arith and math on whole tensors (arith.truncf of a tensor)
  // become linalg.generic, which bufferizes and which ke schedules.
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createSplitBiasFromInitsPass());
  pm.addPass(createConvTransposePhasesPass());
  pm.addPass(createInsertsToGathersPass());
  // Before the transpose folds: its output transpose folds into consumers.
  pm.addPass(createConvsToChannelsLastPass());
  // Before the transpose fold: a 16-bit weight's transpose feeds its
  // extension, which this removes.
  pm.addPass(createFoldExtensionsIntoContractionsPass());
  pm.addPass(createFoldTransposesIntoContractionsPass());
  pm.addPass(createFoldBroadcastsIntoConsumersPass());
  pm.addPass(createEraseDeadResultsPass());
  pm.addPass(createWidenAccumulatorsPass());
  // Before fusion, while each generic is one torch op: PyTorch rounds each
  // op's result once, not each step of its body.
  pm.addPass(createComputeNarrowFloatsInF32Pass());
  pm.addPass(createFoldReductionUnitDimsPass());
  // Before collapsing: stage 1's trailing reduction loops then collapse.
  pm.addPass(createSplitOuterReductionsPass());
  pm.addPass(createCollapseReductionDimsPass());
  if (options.demoteF64)
    pm.addPass(createDemoteF64Pass());
  pm.addPass(createFuseElementwiseChainsPass());
  // Fusion leaves producers whose bodies assert (a gather's index checks)
  // alive with results nobody reads; their husks go.
  pm.addPass(createEraseDeadResultsPass());
  // After fusion: only the i1 tensors that cross kernels are left.
  pm.addPass(createBoolTensorsAsBytesPass());
  pm.addPass(createNormalizeEmptiesPass());
}

LogicalResult ke::prepareGraph(ModuleOp module,
                               const GraphPreparationOptions &options) {
  PassManager pm(module->getContext(), ModuleOp::getOperationName());
  buildGraphPreparationPipeline(pm, options);
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] demote-f64=" << options.demoteF64
                          << "\n");
  return pm.run(module);
}

namespace {

struct PrepareGraphPass : ke::impl::PrepareGraphPassBase<PrepareGraphPass> {
  using PrepareGraphPassBase::PrepareGraphPassBase;

  void runOnOperation() override {
    ke::GraphPreparationOptions options;
    options.demoteF64 = demoteF64;
    OpPassManager pm(ModuleOp::getOperationName());
    ke::buildGraphPreparationPipeline(pm, options);
    if (failed(runPipeline(pm, getOperation())))
      signalPassFailure();
  }
};

} // namespace

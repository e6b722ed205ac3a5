//===- GraphPreparation.h - Inputs into the shapes ke schedules -*- C++ -*-===//
//
// What importers produce (torch-mlir's linalg-on-tensors: transposed
// weights, broadcast biases, chains of elementwise generics, an unused
// argmax, f64 variances) is rewritten before workloads are extracted, so
// that every consumer of a module (ke-opt workloads, sketches, tune, bench
// and compile) sees the same prepared graph and hand-written and imported
// forms of one op get one workload key. The steps are the passes of
// ke/Graph/Passes.td; docs/workloads.md describes what they do to inputs.
//
//===----------------------------------------------------------------------===//
#ifndef KE_GRAPH_GRAPHPREPARATION_H
#define KE_GRAPH_GRAPHPREPARATION_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"

namespace ke {

/// What prepareGraph does beyond its fixed steps.
struct GraphPreparationOptions {
  /// Demote f64 computation on tensors derived from f32 data to f32
  /// (ke-demote-f64), as PyTorch's own kernels compute norms' variances.
  bool demoteF64 = true;
};

/// Adds the preparation steps to `pm` (a pass manager on builtin.module).
void buildGraphPreparationPipeline(mlir::OpPassManager &pm,
                                   const GraphPreparationOptions &options);

/// Runs the graph preparation on `module` in place. A module it has nothing
/// to do for is left unchanged. Fails after a diagnostic when a step fails.
mlir::LogicalResult prepareGraph(mlir::ModuleOp module,
                                 const GraphPreparationOptions &options = {});

} // namespace ke

#endif // KE_GRAPH_GRAPHPREPARATION_H

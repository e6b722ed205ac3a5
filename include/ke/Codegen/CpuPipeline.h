//===- CpuPipeline.h - From a scheduled kernel to LLVM IR on CPUs -*- C++ -*-===//
//
// The CPU lowering of a kernel module (see ke/Workload/Kernel.h):
//   1. apply the schedule, a transform script (transform.named_sequence
//      @__transform_main), to the kernel on tensors;
//   2. bufferize in place on the kernel's arguments;
//   3. lower to the LLVM dialect: scf.forall becomes an OpenMP parallel loop
//      when threads are asked for, otherwise a sequential loop; vectors,
//      memrefs and the rest follow the pipeline verified for MLIR 22
//      (../shared/notes/mlir22-verified.md), with the OpenMP lowering placed
//      before scf-to-cf so alloca scopes keep a single block.
// Without a schedule (the reference) linalg ops become plain loops.
//
//===----------------------------------------------------------------------===//
#ifndef KE_CODEGEN_CPUPIPELINE_H
#define KE_CODEGEN_CPUPIPELINE_H

#include "ke/Codegen/PassPipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace ke {

/// Options of the CPU lowering that are not part of the transform script.
struct CpuLoweringOptions {
  /// OpenMP threads for scf.forall loops; 0 lowers them to sequential loops.
  unsigned numThreads = 0;
  /// For the unscheduled reference: OpenMP threads over the parallel loops
  /// of the linalg ops left (convert-linalg-to-parallel-loops); reductions
  /// stay sequential loops inside, so every output element is computed in
  /// the same order as with plain loops, only sooner. 0: plain loops.
  unsigned referenceThreads = 0;
};

/// Applies the named sequence @__transform_main of `script` to `kernel`.
/// Failures are reported as diagnostics on the payload or the script.
mlir::LogicalResult applySchedule(mlir::ModuleOp kernel, mlir::ModuleOp script);

/// Bufferizes and lowers a (scheduled or unscheduled) kernel module to the
/// LLVM dialect in place.
mlir::LogicalResult lowerKernelToLLVM(mlir::ModuleOp kernel,
                                      const CpuLoweringOptions &options);

/// The passes lowerKernelToLLVM runs, in order.
PassPipeline getCpuLoweringPasses(const CpuLoweringOptions &options);

/// Those passes as text (printed by the passes themselves, every option
/// included), for docs, debugging and the pipeline hash.
std::string getCpuLoweringPipeline(const CpuLoweringOptions &options);

/// 16 hex digits identifying the CPU lowering (pipeline text, ke and LLVM
/// versions): tuning records made under another hash are stale.
std::string getCpuPipelineHash();

} // namespace ke

#endif // KE_CODEGEN_CPUPIPELINE_H

//===- GpuReference.h - The unscheduled kernel on the device ----*- C++ -*-===//
//
// The reference a candidate is checked against is the kernel without a
// schedule, lowered to plain loops (docs/measurement.md). On the CPU it runs
// on this machine (CpuEvaluator). At KernelBench's sizes (inputs of several
// GB, matmuls of hundreds of GFLOP) plain loops on a CPU take minutes per
// workload, so GPU tuning can run the same plain loops on the device once
// instead (GpuEvaluator, --reference=device):
//   1. the reference script breaks ops the loops cannot take into ones they
//      can (linalg.softmax into its generics), as for the CPU;
//   2. ke-gpu-reference-split-reductions: a reduction with few outputs and
//      long rows (a softmax's row sums) is split into partial reductions
//      over interleaved slices, then a reduction of the partials, so that
//      it has threads enough;
//   3. one-shot bufferization, in place on the kernel's arguments, as for
//      the CPU;
//   4. ke-gpu-reference-launches: each linalg op one launch, a thread per
//      point of its parallel loops, its reduction loops in that thread in
//      program order, accumulating in f64 (the body's float arithmetic in
//      f64, its math functions and explicit roundings as written);
//   5. ke's GPU lowering from its first step (lowerKernelToGpuBinary), as
//      for every candidate: intermediate buffers become scratch buffers.
// The accumulation in f64 matters: a check against a reference that sums
// in f32 is ill-conditioned at these sizes. A row of 393216 random values
// of both signs summed in f32 in order is off by up to 5e-3 (relative) from
// the exact sum where the sum is small, 50 times the f32 tolerance, while a
// tree reduction (a GPU schedule) is within 1e-4 (docs/measurement.md).
//
//===----------------------------------------------------------------------===//

#ifndef KE_CODEGEN_GPUREFERENCE_H
#define KE_CODEGEN_GPUREFERENCE_H

#include "ke/Codegen/GpuKernel.h"
#include "ke/Codegen/PassPipeline.h"
#include "ke/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace ke {

/// The transform script both references apply first: linalg.softmax, which
/// neither convert-linalg-to-loops nor ke-gpu-reference-launches takes, is
/// decomposed into the generics that define it.
llvm::StringRef getReferenceScript();

/// The one-shot bufferization of unscheduled kernels (and of the CPU
/// lowering): function boundaries included, identity layouts.
std::unique_ptr<mlir::Pass> createKernelBufferizePass();

/// Steps 2 to 4 above: split reductions, bufferization, cleanup, reference
/// launches.
PassPipeline getGpuReferenceMappingPasses();

/// Lowers `kernel`, a kernel module without a schedule, in place to the
/// device reference's binary for `target` (steps 1-5 above). Fails with
/// diagnostics on an op the reference cannot map or a lowering failure.
mlir::FailureOr<GpuKernelBinary>
lowerReferenceKernelToGpuBinary(mlir::ModuleOp kernel,
                                const TargetDescription &target);

} // namespace ke

#endif // KE_CODEGEN_GPUREFERENCE_H

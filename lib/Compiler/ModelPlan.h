//===- ModelPlan.h - A whole function as a GPU model's plan -----*- C++ -*-===//
//
// A model compiled for a GPU runs its public function as a plan: buffers
// ("slots") and steps (ke/Compiler/ModelFormat.h). The function's kernel
// groups are lowered as `ke-opt compile` lowers them one by one (the same
// kernels, launch shapes and pipeline hash that tuning measured); what is
// left between them is glue whose every op must be free on buffers:
// tensor.empty (a temporary), reshapes (the same buffer), slices, pads and
// concatenations (copies of boxes, cuMemcpy3D, and a fill), constants
// (uploaded once) and the return (the caller's output buffers). Anything else is an error
// naming the op: it has no GPU lowering yet.
//
// Private to lib/Compiler.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_COMPILER_MODELPLAN_H
#define KE_LIB_COMPILER_MODELPLAN_H

#include "ke/Codegen/GpuKernel.h"
#include "ke/Target/Target.h"
#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace ke {

/// One kernel group of the function, compiled.
struct PlannedGroup {
  /// The group's ops in the function (getKernelGroup of its anchor).
  llvm::SmallVector<mlir::Operation *> ops;
  /// Its kernel module: which function values its buffers are, and which
  /// buffer each of its results ends up in.
  const KernelModule *kernel = nullptr;
  /// Its device code and launches.
  const GpuKernelBinary *binary = nullptr;
};

/// The blob of the model whose public function is `func` and whose kernel
/// groups are `groups` (ke/Compiler/ModelFormat.h), for `target` (recorded
/// in the signature with `pipelineHash`). Fails with an error at the op
/// that cannot run on the GPU.
mlir::FailureOr<std::string> buildModelBlob(mlir::func::FuncOp func,
                                            llvm::ArrayRef<PlannedGroup> groups,
                                            const TargetDescription &target,
                                            llvm::StringRef pipelineHash);

} // namespace ke

#endif // KE_LIB_COMPILER_MODELPLAN_H

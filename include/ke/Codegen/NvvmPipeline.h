//===- NvvmPipeline.h - The CUDA part of the GPU lowering -------*- C++ -*-===//
//
// lowerKernelToGpuBinary (ke/Codegen/GpuPipeline.h) lowers kernels for cuda
// targets with the steps it shares with ROCm up to the device passes, then
// runs runNvvmLowering (the NVVM conversion, the kernels' pointer
// attributes, serialization to PTX with CUDA's libdevice) and
// finishNvptxBinary (ptxas to a cubin, when there is one). See
// lib/Codegen/NvvmPipeline.cpp and docs/gpu.md.
//
//===----------------------------------------------------------------------===//
#ifndef KE_CODEGEN_NVVMPIPELINE_H
#define KE_CODEGEN_NVVMPIPELINE_H

#include "ke/Codegen/GpuKernel.h"
#include "ke/Codegen/GpuPipeline.h"
#include "ke/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace ke {

/// The device passes after the shared steps, as text (printed by the
/// passes, every option included), for docs and the pipeline hash: the
/// NVVM conversion, ke-gpu-align-kernel-pointers, gpu-module-to-binary.
std::string getNvptxLoweringPipeline(const TargetDescription &target);

/// Runs those passes on an outlined kernel module, with CUDA's libdevice
/// from the toolkit found through $CUDA_HOME, $CUDA_PATH, $CUDA_ROOT, the
/// toolkit of ptxas or /usr/local/cuda. Fails, at the kernel, when it calls
/// libdevice functions and no libdevice is found. The gpu.binary then holds
/// PTX.
mlir::LogicalResult runNvvmLowering(mlir::ModuleOp kernel,
                                    const TargetDescription &target);

/// Fills in a binary whose assembly is PTX: the PTX itself, or (when
/// `options` ask for assembling and ptxas is found) the cubin with ptxas's
/// register and spill counts. Fails when ptxas rejects the PTX, or is
/// missing and `options.requireAssembler` is set.
mlir::FailureOr<GpuKernelBinary>
finishNvptxBinary(mlir::ModuleOp kernel, const TargetDescription &target,
                  GpuKernelBinary binary, const GpuLoweringOptions &options);

} // namespace ke

#endif // KE_CODEGEN_NVVMPIPELINE_H

//===- GpuPipeline.h - From a scheduled kernel to a GPU binary --*- C++ -*-===//
//
// The GPU lowering of a kernel module (see ke/Workload/Kernel.h) whose
// schedule came from a GPU sketch rule (lib/Sketch/Gpu*.cpp). GPU scripts
// tile, vectorize, bufferize and map their scf.forall loops to blocks and
// threads themselves (transform.gpu.map_forall_to_blocks generate_gpu_launch
// and map_nested_forall_to_threads), so after the script the kernel's
// function holds gpu.launch ops on memrefs. The lowering then:
//   1. cleans up (CSE first, so that identical subviews fold and the
//      self-copies that bufferizing thread foralls leaves behind vanish) and
//      keeps accumulator tiles in registers across loops (a transfer_read /
//      transfer_write pair of one tile hoisted out of a stage loop that
//      touches the tile's buffer nowhere else);
//   2. sinks constants into the launches, so that outlining captures only
//      the kernel's buffers (a captured vector constant has no launch ABI);
//   3. outlines each launch into a gpu.func (gpu-kernel-outlining);
//   4. turns static memref.alloc in the kernels into attributions: workgroup
//      memory (shared memory, LDS) for buffers in #gpu.address_space<
//      workgroup> or outside thread-mapped code, private memory otherwise
//      (a kernel cannot call malloc);
//   5. (CUDA) gives vector loads and stores on kernel buffers the alignment
//      their indices prove (buffers are 16-byte aligned: the runner
//      allocates each with cuMemAlloc and passes offset 0), so that 128-bit
//      accesses become ld.global.v4 / st.global.v4; lowers the gpu.module to
//      NVVM, marks the kernels' pointer parameters align 16 and serializes
//      it to PTX (nvvm-attach-target with the target's chip and features,
//      e.g. sm_90 and +ptx80), see ke/Codegen/NvvmPipeline.h;
//   6. reads the launches off the host function's gpu.launch_func ops.
// When ptxas is available ($KE_PTXAS, else ptxas on PATH) the PTX is also
// assembled to a cubin, and ptxas -v's register and spill counts are kept.
// docs/gpu.md describes the pipeline and its checks.
//
//===----------------------------------------------------------------------===//
#ifndef KE_CODEGEN_GPUPIPELINE_H
#define KE_CODEGEN_GPUPIPELINE_H

#include "ke/Codegen/GpuKernel.h"
#include "ke/Codegen/Ptxas.h"
#include "ke/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace ke {

/// Options of the GPU lowering that are not part of the transform script.
struct GpuLoweringOptions {
  /// Assemble the PTX with ptxas when it is available (image becomes a
  /// cubin). Without ptxas the image is the PTX, which the driver JITs.
  bool assemble = true;
  /// Fail when ptxas is not available and `assemble` is set.
  bool requireAssembler = false;
};

/// Lowers a kernel module whose schedule has been applied (it holds
/// gpu.launch ops on memrefs) to device code and its launches, in place:
/// `kernel` is left holding the host function and the gpu.binary. Fails with
/// diagnostics when the kernel is not fully mapped to the GPU, a launch has
/// dynamic sizes, or code generation fails.
mlir::FailureOr<GpuKernelBinary>
lowerKernelToGpuBinary(mlir::ModuleOp kernel, const TargetDescription &target,
                       const GpuLoweringOptions &options = {});

/// The whole GPU lowering of `target` as text: the names of the steps
/// lowerKernelToGpuBinary runs before the device passes (its step list, so
/// the text cannot drift from what runs), then the device pipeline.
std::string getGpuPipelineText(const TargetDescription &target);

/// 16 hex digits identifying the GPU lowering of `target`'s family
/// (getGpuPipelineText with a generic chip, hashed by hashLoweringPipeline):
/// tuning records made under another hash are stale.
std::string getGpuPipelineHash(const TargetDescription &target);

} // namespace ke

#endif // KE_CODEGEN_GPUPIPELINE_H

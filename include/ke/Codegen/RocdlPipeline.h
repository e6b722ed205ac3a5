//===- RocdlPipeline.h - The ROCm part of the GPU lowering ------*- C++ -*-===//
//
// lowerKernelToGpuBinary (ke/Codegen/GpuPipeline.h) lowers kernels for rocm
// targets with the same steps as for CUDA up to the device pass list, then
// runs getRocdlLoweringPipeline and finishRocdlBinary: AMDGCN assembly,
// assembled and linked with ld.lld into an HSA code object (HSACO). See
// lib/Codegen/RocdlPipeline.cpp and docs/gpu.md.
//
//===----------------------------------------------------------------------===//
#ifndef KE_CODEGEN_ROCDLPIPELINE_H
#define KE_CODEGEN_ROCDLPIPELINE_H

#include "ke/Codegen/GpuKernel.h"
#include "ke/Codegen/PassPipeline.h"
#include "ke/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace ke {

/// The ROCDL passes after outlining, ending in gpu-module-to-binary with
/// format=isa. `deviceLibRoot` is the folder whose amdgcn/bitcode holds the
/// ROCm device libraries (empty: no toolkit option, as in the pipeline hash).
PassPipeline getRocdlLoweringPasses(const TargetDescription &target,
                                    llvm::StringRef deviceLibRoot = "");

/// Those passes as text (printed by the passes, every option included).
std::string getRocdlLoweringPipeline(const TargetDescription &target,
                                     llvm::StringRef deviceLibRoot = "");

/// Runs the ROCDL steps on an outlined kernel module (what
/// getRocdlLoweringPipeline lists, with the device libraries that
/// findRocmDeviceLibRoot finds), after two fixes the NVVM path does not
/// need: n-D vector.from_elements unrolled (convert-gpu-to-rocdl does not
/// lower them) and private attributions moved to the private address space
/// (scratch allocas are in address space 5 on AMDGPU). The gpu.binary then
/// holds AMDGCN assembly.
mlir::LogicalResult runRocdlLowering(mlir::ModuleOp kernel,
                                     const TargetDescription &target);

/// The folder whose amdgcn/bitcode/ocml.bc exists: $KE_ROCM_DEVICE_LIBS,
/// $ROCM_PATH, /opt/rocm, then Debian's /usr/lib/<multiarch>; empty when
/// there is none (kernels that call math functions then fail to link).
std::string findRocmDeviceLibRoot();

/// The ld.lld that links code objects: $KE_LLD, ld.lld-22 or ld.lld on PATH,
/// then $ROCM_PATH/llvm/bin/ld.lld and /opt/rocm/llvm/bin/ld.lld; empty when
/// there is none.
std::string findLld();

/// The resources of one kernel, from the .amdhsa_* directives of its
/// kernel descriptor in the AMDGCN assembly.
struct AmdgpuKernelReport {
  std::string kernelName;
  uint64_t vgprs = 0, sgprs = 0;
  /// .amdhsa_group_segment_fixed_size: static LDS bytes per workgroup.
  uint64_t ldsBytes = 0;
  /// .amdhsa_private_segment_fixed_size: scratch bytes per lane.
  uint64_t scratchBytes = 0;
  uint64_t vgprSpills = 0;
};

/// Reads the kernels' resources off AMDGCN assembly.
llvm::SmallVector<AmdgpuKernelReport>
parseAmdgpuKernelReports(llvm::StringRef assembly);

/// Assembles `binary.assembly` (AMDGCN) and links it into an HSACO with
/// ld.lld: `binary` becomes format "hsaco" with the code object as image,
/// the kernels' resources in assemblerLog and the most VGPRs as registers.
/// Fails with a diagnostic on `kernel` when assembling or linking fails or a
/// kernel uses more LDS than `target` has.
mlir::FailureOr<GpuKernelBinary>
finishRocdlBinary(mlir::ModuleOp kernel, const TargetDescription &target,
                  GpuKernelBinary binary);

} // namespace ke

#endif // KE_CODEGEN_ROCDLPIPELINE_H

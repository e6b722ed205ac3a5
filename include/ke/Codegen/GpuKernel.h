//===- GpuKernel.h - A lowered GPU kernel group, ready to launch -*- C++ -*-===//
//
// The contract between GPU code generation (lib/Codegen: schedule -> gpu
// dialect -> PTX / cubin / HSACO) and the GPU runners (lib/Runtime:
// CudaRunner, HipRunner): the device code of one kernel module plus the
// launches its host function makes, in order, with how each launch argument
// is formed from the kernel module's buffers (ke/Workload/Kernel.h
// KernelModule::arguments). A runner needs nothing else: no MLIR, no LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef KE_CODEGEN_GPUKERNEL_H
#define KE_CODEGEN_GPUKERNEL_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ke {

/// One argument of a kernel launch, in the kernel's parameter order.
struct GpuLaunchArgument {
  enum class Kind {
    /// A field of the memref descriptor of kernel-module buffer `buffer`
    /// (the expanded descriptor of MLIR's calling convention: allocated
    /// pointer, aligned pointer, offset, sizes..., strides...): `field` is
    /// 0 allocated, 1 aligned, 2 offset, 3.. sizes then strides.
    BufferField,
    /// A 64-bit integer (an index captured by kernel outlining).
    Index,
    /// A 32-bit float / 64-bit float constant captured by outlining.
    F32,
    F64,
    /// A 32-bit integer constant.
    I32,
    /// A field of the descriptor of scratch buffer `buffer`
    /// (GpuKernelBinary::scratch), numbered as for BufferField.
    ScratchField,
    /// The TMA tensor map (CUtensorMap) GpuKernelBinary::tensorMaps[`buffer`]
    /// describes, encoded over its buffer's device address and passed by
    /// value (kTensorMapBytes, a grid-constant parameter): CUDA only.
    TensorMap
  };
  Kind kind = Kind::Index;
  unsigned buffer = 0;
  unsigned field = 0;
  /// The value of Index/I32 (and F32/F64 bit patterns widened to 64 bits).
  int64_t value = 0;
};

/// One gpu.launch_func of the host function.
struct GpuLaunch {
  /// Symbol of the kernel inside the device binary.
  std::string kernelName;
  std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  /// Dynamic shared memory bytes.
  uint32_t dynamicSharedMemoryBytes = 0;
  std::vector<GpuLaunchArgument> arguments;
};

/// A device buffer that the launches share and the kernel module's
/// arguments do not hold (partial results passed from one launch to the
/// next). The runner allocates it once per module; its contents are
/// undefined before the first launch.
struct GpuScratchBuffer {
  /// Contiguous row-major shape, in elements.
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
};

/// The size and alignment of an encoded TMA tensor map (CUtensorMap).
inline constexpr uint64_t kTensorMapBytes = 128, kTensorMapAlignment = 64;

/// A TMA tensor map (Hopper's bulk tensor copies, cuTensorMapEncodeTiled)
/// over one buffer: the runners encode it with the buffer's device address
/// at every launch that names it (GpuLaunchArgument::TensorMap) and pass
/// the 128 bytes as the parameter. The buffer is contiguous and row-major.
struct GpuTensorMap {
  /// Kernel-module buffer `buffer`, or scratch buffer `buffer`.
  bool scratch = false;
  unsigned buffer = 0;
  /// CUtensorMapDataType: 6 FLOAT16, 7 FLOAT32, 9 BFLOAT16.
  uint32_t dataType = 0;
  uint32_t elementBytes = 0;
  /// The buffer's shape and the box one copy moves, outermost first
  /// (reversed for the driver, which takes the innermost first).
  std::vector<int64_t> shape, box;
  /// 0 (none) or 128: the 128-byte swizzle (CU_TENSOR_MAP_SWIZZLE_128B).
  uint32_t swizzleBytes = 0;
};

/// A kernel module lowered for a GPU.
struct GpuKernelBinary {
  /// "ptx", "cubin" or "hsaco": what `image` holds (cubin/hsaco binary,
  /// ptx text).
  std::string format;
  std::string image;
  /// The PTX (or AMDGCN assembly) text, for inspection and for drivers that
  /// JIT it, when available.
  std::string assembly;
  /// Launches in order; the kernel module's buffers persist across them.
  std::vector<GpuLaunch> launches;
  /// Scratch buffers the launches name (GpuLaunchArgument::ScratchField).
  std::vector<GpuScratchBuffer> scratch;
  /// Tensor maps the launches name (GpuLaunchArgument::TensorMap).
  std::vector<GpuTensorMap> tensorMaps;
  /// What the assembler (ptxas -v) reported, when it ran: its messages, the
  /// most registers any kernel uses per thread, and the bytes all kernels
  /// spill to local memory (0 when it did not run).
  std::string assemblerLog;
  uint32_t registers = 0;
  uint64_t spillStoreBytes = 0;
  uint64_t spillLoadBytes = 0;
};

} // namespace ke

#endif // KE_CODEGEN_GPUKERNEL_H

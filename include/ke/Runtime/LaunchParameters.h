//===- LaunchParameters.h - Kernel parameters of a GPU launch ---*- C++ -*-===//
//
// What the CUDA and HIP runners pass to cuLaunchKernel / hipModuleLaunchKernel
// as `kernelParams`: one pointer per kernel parameter, each pointing at the
// parameter's value. Both drivers read a parameter's size from the kernel
// (its PTX signature, its code object's metadata), so the array is the same
// for both; only the device addresses differ.
//
//===----------------------------------------------------------------------===//
#ifndef KE_RUNTIME_LAUNCHPARAMETERS_H
#define KE_RUNTIME_LAUNCHPARAMETERS_H

#include "ke/Codegen/GpuKernel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace ke {

/// Where a kernel-module buffer lives on the device, for argument packing.
struct DeviceBufferRef {
  uint64_t address = 0;
  /// The buffer's shape; it is contiguous and row-major.
  llvm::ArrayRef<int64_t> shape;
};

/// Encodes `map` over the buffer at device address `address` into the
/// kTensorMapBytes at `out` (64-byte aligned): cuTensorMapEncodeTiled.
using TensorMapEncoder = llvm::function_ref<llvm::Error(
    const GpuTensorMap &map, uint64_t address, unsigned char *out)>;

/// The parameter array of one launch: the driver reads one value per kernel
/// parameter through the pointers data() returns. Moving it keeps those
/// pointers valid.
class LaunchParameters {
public:
  size_t size() const { return slots.size(); }
  /// The `kernelParams` array.
  void **data() { return pointers.data(); }
  /// Parameter `i` as stored: 64-bit values whole, 32-bit ones (f32, i32)
  /// in the low half.
  uint64_t getSlot(size_t i) const { return slots[i]; }
  /// 4 or 8; kTensorMapBytes for a tensor map (then getSlot is its index
  /// among the launch's maps).
  unsigned getSizeInBytes(size_t i) const { return sizes[i]; }

private:
  friend llvm::Expected<LaunchParameters>
  packLaunchArguments(const GpuLaunch &, llvm::ArrayRef<DeviceBufferRef>,
                      llvm::ArrayRef<DeviceBufferRef>,
                      llvm::ArrayRef<GpuTensorMap>, TensorMapEncoder);
  struct alignas(kTensorMapAlignment) EncodedTensorMap {
    unsigned char bytes[kTensorMapBytes];
  };
  std::vector<uint64_t> slots;
  std::vector<uint8_t> sizes;
  /// The encoded tensor maps, passed by value.
  std::vector<EncodedTensorMap> maps;
  std::vector<void *> pointers;
};

/// Forms the parameters of `launch` from the kernel module's buffers: for a
/// BufferField, the field of the buffer's expanded memref descriptor
/// (allocated and aligned pointers: the device address; offset 0; sizes;
/// row-major strides); a ScratchField likewise from `scratch`, the module's
/// scratch buffers (GpuKernelBinary::scratch); a TensorMap, `tensorMaps`'
/// entry encoded by `encode` over its buffer's address, passed by value;
/// captured constants as they are. Fails on a buffer, map or descriptor
/// field out of range, or a map without an encoder.
llvm::Expected<LaunchParameters>
packLaunchArguments(const GpuLaunch &launch,
                    llvm::ArrayRef<DeviceBufferRef> buffers,
                    llvm::ArrayRef<DeviceBufferRef> scratch = {},
                    llvm::ArrayRef<GpuTensorMap> tensorMaps = {},
                    TensorMapEncoder encode = nullptr);

} // namespace ke

#endif // KE_RUNTIME_LAUNCHPARAMETERS_H

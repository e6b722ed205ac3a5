//===- LaunchParameters.cpp - Kernel parameters of a GPU launch -----------===//

#include "ke/Runtime/LaunchParameters.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace ke;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<LaunchParameters>
ke::packLaunchArguments(const GpuLaunch &launch,
                        llvm::ArrayRef<DeviceBufferRef> buffers,
                        llvm::ArrayRef<DeviceBufferRef> scratch,
                        llvm::ArrayRef<GpuTensorMap> tensorMaps,
                        TensorMapEncoder encode) {
  LaunchParameters params;
  for (auto [index, argument] : llvm::enumerate(launch.arguments)) {
    uint64_t slot = 0;
    uint8_t size = 8;
    switch (argument.kind) {
    case GpuLaunchArgument::Kind::BufferField:
    case GpuLaunchArgument::Kind::ScratchField: {
      bool isScratch = argument.kind == GpuLaunchArgument::Kind::ScratchField;
      llvm::ArrayRef<DeviceBufferRef> pool = isScratch ? scratch : buffers;
      if (argument.buffer >= pool.size())
        return makeError(llvm::formatv(
            "launch of {0}: parameter #{1} names {2}buffer #{3}, but the "
            "kernel module has {4}",
            launch.kernelName, index, isScratch ? "scratch " : "",
            argument.buffer, pool.size()));
      const DeviceBufferRef &buffer = pool[argument.buffer];
      size_t rank = buffer.shape.size();
      unsigned field = argument.field;
      if (field < 2) {
        slot = buffer.address; // allocated and aligned pointers
      } else if (field == 2) {
        slot = 0; // offset
      } else if (field < 3 + rank) {
        slot = uint64_t(buffer.shape[field - 3]);
      } else if (field < 3 + 2 * rank) {
        // Row-major contiguous strides: the product of the later sizes.
        int64_t stride = 1;
        for (size_t d = field - 3 - rank + 1; d < rank; ++d)
          stride *= buffer.shape[d];
        slot = uint64_t(stride);
      } else {
        return makeError(llvm::formatv(
            "launch of {0}: parameter #{1} names field {2} of buffer #{3}, "
            "whose rank-{4} descriptor has {5} fields",
            launch.kernelName, index, field, argument.buffer, rank,
            3 + 2 * rank));
      }
      break;
    }
    case GpuLaunchArgument::Kind::TensorMap: {
      if (argument.buffer >= tensorMaps.size())
        return makeError(llvm::formatv(
            "launch of {0}: parameter #{1} names tensor map #{2}, but the "
            "module has {3}",
            launch.kernelName, index, argument.buffer, tensorMaps.size()));
      const GpuTensorMap &map = tensorMaps[argument.buffer];
      llvm::ArrayRef<DeviceBufferRef> pool = map.scratch ? scratch : buffers;
      if (map.buffer >= pool.size())
        return makeError(llvm::formatv(
            "launch of {0}: tensor map #{1} names {2}buffer #{3}, but the "
            "kernel module has {4}",
            launch.kernelName, argument.buffer, map.scratch ? "scratch " : "",
            map.buffer, pool.size()));
      if (!encode)
        return makeError("launch of " + launch.kernelName +
                         ": its kernel copies with TMA tensor maps, which "
                         "only CUDA drivers of 12.0 and later encode");
      params.maps.emplace_back();
      if (llvm::Error error =
              encode(map, pool[map.buffer].address, params.maps.back().bytes))
        return error;
      // The slot holds the map's index among the launch's maps.
      slot = params.maps.size() - 1;
      size = kTensorMapBytes;
      break;
    }
    case GpuLaunchArgument::Kind::Index:
    case GpuLaunchArgument::Kind::F64:
      slot = uint64_t(argument.value);
      break;
    case GpuLaunchArgument::Kind::F32:
    case GpuLaunchArgument::Kind::I32: {
      // The low 32 bits, at the start of the slot (the driver reads 4 bytes).
      uint32_t low = uint32_t(uint64_t(argument.value));
      std::memcpy(&slot, &low, sizeof(low));
      size = 4;
      break;
    }
    }
    params.slots.push_back(slot);
    params.sizes.push_back(size);
  }
  // The slots and maps no longer move: point at them.
  for (auto [slot, size] : llvm::zip(params.slots, params.sizes))
    params.pointers.push_back(size == kTensorMapBytes
                                  ? static_cast<void *>(params.maps[slot].bytes)
                                  : static_cast<void *>(&slot));
  return params;
}

//===- GpuKernelABI.h - What ke's runners promise kernels ------*- C++ -*-===//
//
// Private to lib/Codegen. docs/gpu.md and docs/compile.md state the kernel
// ABI: every buffer argument is allocated on its own and passed with offset
// 0, and buffer arguments do not overlap.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_CODEGEN_GPUKERNELABI_H
#define KE_LIB_CODEGEN_GPUKERNELABI_H

#include <cstdint>

namespace ke {

/// The alignment, in bytes, of every kernel buffer's pointers: ke's
/// runners allocate each buffer on its own with the driver's allocator
/// (cuMemAlloc aligns to 256 bytes) and pass it with offset 0. 16 bytes is
/// what one 128-bit access needs.
constexpr uint64_t kKernelBufferAlignment = 16;

} // namespace ke

#endif // KE_LIB_CODEGEN_GPUKERNELABI_H

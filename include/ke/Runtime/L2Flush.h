//===- L2Flush.h - The read-only L2 flush kernel ----------------*- C++ -*-===//
//
// Before every timed run the GPU runner evicts what the previous run left in
// the L2 by touching a buffer twice its size. Writing that buffer (a memset)
// leaves the L2 full of dirty lines, which the timed kernel then has to write
// back as it evicts them: on an H200 a 64 MB copy measured 3768 GB/s after a
// memset flush and 4124 GB/s after a read flush (docs/measurement.md).
// Reading the buffer leaves clean lines, which are dropped for free. This is
// the kernel that reads it: hand-written PTX, which the CUDA driver
// JIT-compiles for the device it loads on (ke-opt links no CUDA library, so
// there is no nvcc-built cubin to embed).
//
//===----------------------------------------------------------------------===//
#ifndef KE_RUNTIME_L2FLUSH_H
#define KE_RUNTIME_L2FLUSH_H

#include <cstdint>

namespace ke {

/// The flush kernel's entry point in getL2FlushKernelPtx().
inline constexpr const char *kL2FlushKernelName = "ke_l2_flush_read";

/// The flush kernel's third parameter. Each thread stores what it read only
/// when it equals this value, which the zeroed flush buffer never gives; the
/// compiler cannot prove that, so it keeps the loads.
inline constexpr uint32_t kL2FlushMagic = 0x9E3779B9u;

/// The flush kernel, PTX (NUL-terminated): `ke_l2_flush_read(.u64 buffer,
/// .u64 vectors, .u32 magic)` reads `vectors` 16-byte vectors of `buffer`
/// with `ld.global.v4.u32` in a grid-stride loop over x and xors them; a
/// thread whose xor equals `magic` stores it to the buffer's first word.
/// `.target sm_52` and `.version 7.0`: any driver since CUDA 11 JIT-compiles
/// it for any GPU ke targets.
const char *getL2FlushKernelPtx();

/// How the flush kernel covers a buffer.
struct L2FlushLaunch {
  /// 16-byte vectors read (a trailing part smaller than 16 bytes is not).
  uint64_t vectors = 0;
  /// A one-dimensional grid of `blocks` blocks of `threads` threads.
  unsigned blocks = 1, threads = 256;
};

/// The launch for a flush buffer of `bytes` on a device of `multiprocessors`
/// SMs (0: not known, 132 assumed): one thread per vector, at most 8 blocks
/// of 256 threads per SM (one full wave); each thread strides over the rest.
L2FlushLaunch getL2FlushLaunch(uint64_t bytes, unsigned multiprocessors);

} // namespace ke

#endif // KE_RUNTIME_L2FLUSH_H

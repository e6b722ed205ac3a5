//===- GpuWgmma.h - Hopper wgmma descriptors ---------------------*- C++ -*-===//
//
// Private to lib/Codegen (and its unit test): the constant fields of the
// shared-memory matrix descriptors that ke-gpu-wgmma-matmuls gives wgmma.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_CODEGEN_GPUWGMMA_H
#define KE_LIB_CODEGEN_GPUWGMMA_H

#include <cstdint>

namespace ke {

/// The fields of a wgmma shared-memory matrix descriptor other than its
/// start address, for a tile in the 128-byte swizzle (PTX ISA, "Matrix
/// Descriptor Format": bits 16-29 hold `leadingBytes` >> 4, bits 32-45
/// `strideBytes` >> 4, bits 62-63 the layout, 1 for the 128-byte swizzle;
/// the base offset, bits 49-51, is 0 for tiles aligned to 1024 bytes).
/// The start address >> 4 goes in bits 0-13.
uint64_t encodeWgmmaDescriptorFields(uint64_t leadingBytes,
                                     uint64_t strideBytes);

} // namespace ke

#endif // KE_LIB_CODEGEN_GPUWGMMA_H

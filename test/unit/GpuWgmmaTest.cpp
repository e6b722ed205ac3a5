//===- GpuWgmmaTest.cpp - wgmma descriptor fields -------------------------===//
//
// The constant fields of the shared-memory matrix descriptors
// ke-gpu-wgmma-matmuls gives wgmma, against the bit layout of the PTX ISA's
// "Matrix Descriptor Format" written out by hand.
//
//===----------------------------------------------------------------------===//

// The encoder is private to lib/Codegen.
#include "../../lib/Codegen/GpuWgmma.h"

#include "gtest/gtest.h"

using namespace ke;

namespace {

/// Field `bits` wide at `start` of `descriptor`.
uint64_t field(uint64_t descriptor, unsigned start, unsigned bits) {
  return (descriptor >> start) & ((uint64_t(1) << bits) - 1);
}

TEST(GpuWgmma, DescriptorFieldsOfKMajorTiles) {
  // Rows of 128 bytes in 8-row atoms of 1024 bytes; the leading offset is
  // unused with the 128-byte swizzle (16 bytes, encoded 1).
  uint64_t d = encodeWgmmaDescriptorFields(16, 1024);
  EXPECT_EQ(field(d, 0, 14), 0u) << "the start address is added per tile";
  EXPECT_EQ(field(d, 16, 14), 1u);
  EXPECT_EQ(field(d, 32, 14), 64u);
  EXPECT_EQ(field(d, 49, 3), 0u) << "tiles are 1024-byte aligned";
  EXPECT_EQ(field(d, 62, 2), 1u) << "1 is the 128-byte swizzle";
  // Nothing else is set.
  EXPECT_EQ(d, (uint64_t(1) << 16) | (uint64_t(64) << 32) |
                   (uint64_t(1) << 62));
}

TEST(GpuWgmma, DescriptorFieldsOfMnMajorSlabs) {
  // B stored K x N: 64-column slabs of 64 rows (8192 bytes apart).
  uint64_t d = encodeWgmmaDescriptorFields(8192, 1024);
  EXPECT_EQ(field(d, 16, 14), 512u);
  EXPECT_EQ(field(d, 32, 14), 64u);
  EXPECT_EQ(field(d, 62, 2), 1u);
}

TEST(GpuWgmma, DescriptorFieldsStayInTheirBits) {
  // Offsets are 14-bit fields of 16-byte units: a larger one must not spill
  // into the next field.
  uint64_t d = encodeWgmmaDescriptorFields(uint64_t(1) << 20, 0);
  EXPECT_EQ(field(d, 30, 2), 0u);
  EXPECT_EQ(field(d, 32, 14), 0u);
}

} // namespace

//===- HostBuffer.h - Kernel arguments in host memory -----------*- C++ -*-===//
//
// A HostBuffer owns the aligned storage of one kernel argument and the
// memref descriptor that points at it ({allocated, aligned, offset, sizes,
// strides}, the layout MLIR's LLVM lowering uses). It fills itself with
// seeded random values, poisons itself, and compares itself to a reference.
//
//===----------------------------------------------------------------------===//
#ifndef KE_RUNTIME_HOSTBUFFER_H
#define KE_RUNTIME_HOSTBUFFER_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace ke {

/// Element types the runners can fill and compare.
enum class ElementKind { F64, F32, F16, BF16, I64, I32, I16, I8, I1 };

/// The kind of `type`, or std::nullopt when the runners do not support it.
std::optional<ElementKind> getElementKind(mlir::Type type);
/// Bytes per element in memory (i1 takes a byte).
unsigned getElementBytes(ElementKind kind);
llvm::StringRef stringifyElementKind(ElementKind kind);
/// The relative L2 error a result of this type may have against the
/// reference: fp64 1e-9, fp32 1e-4, fp16 1e-2, bf16 3e-2, integers 0.
double getTolerance(ElementKind kind);
/// The relative L2 error an f32 result of a TF32 contraction may have:
/// 4e-3, four TF32 unit roundoffs. The tensor cores truncate each f32
/// operand to 10 mantissa bits (a relative error in [0, 2^-10)), so a
/// product is off by up to 2^-9, about 2^-10 on average and biased the
/// same way; a dot product inherits that average whatever its length
/// (same-sign terms add their errors as they add their values; mixed-sign
/// ones add both as random walks), while the f32 accumulation adds at most
/// K x 2^-24. docs/measurement.md.
double getTF32Tolerance();

class HostBuffer {
public:
  HostBuffer(llvm::ArrayRef<int64_t> shape, ElementKind kind);
  HostBuffer(const HostBuffer &other);
  HostBuffer &operator=(const HostBuffer &other);
  HostBuffer(HostBuffer &&) = default;
  HostBuffer &operator=(HostBuffer &&) = default;

  ElementKind getKind() const { return kind; }
  int64_t getNumElements() const { return numElements; }
  size_t getSizeInBytes() const { return numElements * getElementBytes(kind); }
  void *getData() { return storage.get(); }
  const void *getData() const { return storage.get(); }
  /// The memref descriptor to pass to a kernel.
  void *getDescriptor() { return descriptor.data(); }

  /// Seeded random values, never zero: floats in +-[0.1, 1], integers in
  /// +-[1, 8], booleans both ways. The same seed gives the same values.
  void fillRandom(uint64_t seed);
  /// NaN for floats and 0x5A bytes for integers, so that an element a kernel
  /// forgets to write cannot pass the check.
  void poison();
  void copyFrom(const HostBuffer &other);
  double getAsDouble(int64_t index) const;

private:
  void buildDescriptor();

  llvm::SmallVector<int64_t> shape;
  ElementKind kind;
  int64_t numElements;
  std::unique_ptr<uint8_t[], void (*)(uint8_t *)> storage;
  llvm::SmallVector<int64_t> descriptor;
};

/// ||actual - expected||_2 / ||expected||_2 (the absolute norm when the
/// expected values are all zero); infinity when an element of `actual` is
/// NaN or infinite where `expected` is finite.
double relativeL2Error(const HostBuffer &actual, const HostBuffer &expected);

/// Rounds a float to the nearest fp16 / bf16 bit pattern, and back.
uint16_t floatToHalfBits(float value);
float halfBitsToFloat(uint16_t bits);
uint16_t floatToBFloatBits(float value);
float bfloatBitsToFloat(uint16_t bits);

} // namespace ke

#endif // KE_RUNTIME_HOSTBUFFER_H

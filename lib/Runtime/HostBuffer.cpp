//===- HostBuffer.cpp - Kernel arguments in host memory -------------------===//

#include "ke/Runtime/HostBuffer.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace ke;

std::optional<ElementKind> ke::getElementKind(mlir::Type type) {
  if (type.isF64())
    return ElementKind::F64;
  if (type.isF32())
    return ElementKind::F32;
  if (type.isF16())
    return ElementKind::F16;
  if (type.isBF16())
    return ElementKind::BF16;
  if (type.isInteger(64) || type.isIndex())
    return ElementKind::I64;
  if (type.isInteger(32))
    return ElementKind::I32;
  if (type.isInteger(16))
    return ElementKind::I16;
  if (type.isInteger(8))
    return ElementKind::I8;
  if (type.isInteger(1))
    return ElementKind::I1;
  return std::nullopt;
}

unsigned ke::getElementBytes(ElementKind kind) {
  switch (kind) {
  case ElementKind::F64:
  case ElementKind::I64:
    return 8;
  case ElementKind::F32:
  case ElementKind::I32:
    return 4;
  case ElementKind::F16:
  case ElementKind::BF16:
  case ElementKind::I16:
    return 2;
  case ElementKind::I8:
  case ElementKind::I1:
    return 1;
  }
  return 1;
}

llvm::StringRef ke::stringifyElementKind(ElementKind kind) {
  switch (kind) {
  case ElementKind::F64: return "f64";
  case ElementKind::F32: return "f32";
  case ElementKind::F16: return "f16";
  case ElementKind::BF16: return "bf16";
  case ElementKind::I64: return "i64";
  case ElementKind::I32: return "i32";
  case ElementKind::I16: return "i16";
  case ElementKind::I8: return "i8";
  case ElementKind::I1: return "i1";
  }
  return "?";
}

double ke::getTolerance(ElementKind kind) {
  switch (kind) {
  case ElementKind::F64: return 1e-9;
  case ElementKind::F32: return 1e-4;
  case ElementKind::F16: return 1e-2;
  case ElementKind::BF16: return 3e-2;
  default: return 0.0;
  }
}

double ke::getTF32Tolerance() { return 4e-3; }

uint16_t ke::floatToHalfBits(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mantissa = x & 0x7FFFFFu;
  int32_t exponent = int32_t((x >> 23) & 0xFF) - 127 + 15;
  if (((x >> 23) & 0xFF) == 0xFF) // inf or NaN
    return sign | 0x7C00u | (mantissa ? 0x200u : 0u);
  if (exponent >= 31)
    return sign | 0x7C00u; // overflow to inf
  if (exponent <= 0) {     // subnormal or zero
    if (exponent < -10)
      return sign;
    mantissa |= 0x800000u;
    uint32_t shift = 14 - exponent;
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = sign | (uint32_t(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
    ++half; // may carry into the exponent, which is correct rounding
  return half;
}

float ke::halfBitsToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1F;
  uint32_t mantissa = bits & 0x3FFu;
  uint32_t x;
  if (exponent == 0) {
    if (mantissa == 0) {
      x = sign;
    } else { // subnormal: normalize
      exponent = 1;
      while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3FFu;
      x = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
    }
  } else if (exponent == 31) {
    x = sign | 0x7F800000u | (mantissa << 13);
  } else {
    x = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &x, 4);
  return value;
}

uint16_t ke::floatToBFloatBits(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u)
    return uint16_t((x >> 16) | 0x40u); // quiet NaN
  x += 0x7FFFu + ((x >> 16) & 1u);      // round to nearest even
  return uint16_t(x >> 16);
}

float ke::bfloatBitsToFloat(uint16_t bits) {
  uint32_t x = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &x, 4);
  return value;
}

namespace {

void freeAligned(uint8_t *p) { std::free(p); }

uint8_t *allocateAligned(size_t bytes) {
  // 64-byte alignment: a cache line and an AVX-512 vector.
  size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  return static_cast<uint8_t *>(std::aligned_alloc(64, rounded));
}

/// splitmix64: small, fast and the same everywhere.
uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

} // namespace

HostBuffer::HostBuffer(llvm::ArrayRef<int64_t> shape, ElementKind kind)
    : shape(shape), kind(kind), numElements(1),
      storage(nullptr, freeAligned) {
  for (int64_t dim : shape)
    numElements *= dim;
  storage.reset(allocateAligned(getSizeInBytes()));
  buildDescriptor();
}

HostBuffer::HostBuffer(const HostBuffer &other)
    : HostBuffer(other.shape, other.kind) {
  copyFrom(other);
}

HostBuffer &HostBuffer::operator=(const HostBuffer &other) {
  if (this != &other) {
    HostBuffer copy(other);
    *this = std::move(copy);
  }
  return *this;
}

void HostBuffer::buildDescriptor() {
  // {allocated, aligned, offset, sizes[rank], strides[rank]}; row major.
  descriptor.clear();
  auto address = reinterpret_cast<int64_t>(storage.get());
  descriptor.push_back(address);
  descriptor.push_back(address);
  descriptor.push_back(0);
  for (int64_t dim : shape)
    descriptor.push_back(dim);
  llvm::SmallVector<int64_t> strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  descriptor.append(strides.begin(), strides.end());
}

void HostBuffer::fillRandom(uint64_t seed) {
  uint64_t state = seed * 0x2545F4914F6CDD1Dull + 1;
  uint8_t *bytes = storage.get();
  for (int64_t i = 0; i < numElements; ++i) {
    uint64_t r = nextRandom(state);
    double magnitude = 0.1 + 0.9 * double(r >> 11) * 0x1.0p-53;
    double value = (r & 1) ? magnitude : -magnitude;
    int64_t integer = int64_t((r >> 8) % 8 + 1) * ((r & 1) ? 1 : -1);
    switch (kind) {
    case ElementKind::F64:
      reinterpret_cast<double *>(bytes)[i] = value;
      break;
    case ElementKind::F32:
      reinterpret_cast<float *>(bytes)[i] = float(value);
      break;
    case ElementKind::F16:
      reinterpret_cast<uint16_t *>(bytes)[i] = floatToHalfBits(float(value));
      break;
    case ElementKind::BF16:
      reinterpret_cast<uint16_t *>(bytes)[i] = floatToBFloatBits(float(value));
      break;
    case ElementKind::I64:
      reinterpret_cast<int64_t *>(bytes)[i] = integer;
      break;
    case ElementKind::I32:
      reinterpret_cast<int32_t *>(bytes)[i] = int32_t(integer);
      break;
    case ElementKind::I16:
      reinterpret_cast<int16_t *>(bytes)[i] = int16_t(integer);
      break;
    case ElementKind::I8:
      reinterpret_cast<int8_t *>(bytes)[i] = int8_t(integer);
      break;
    case ElementKind::I1:
      bytes[i] = r & 1;
      break;
    }
  }
}

void HostBuffer::poison() {
  uint8_t *bytes = storage.get();
  switch (kind) {
  case ElementKind::F64:
    std::fill_n(reinterpret_cast<double *>(bytes), numElements,
                std::numeric_limits<double>::quiet_NaN());
    break;
  case ElementKind::F32:
    std::fill_n(reinterpret_cast<float *>(bytes), numElements,
                std::numeric_limits<float>::quiet_NaN());
    break;
  case ElementKind::F16:
    std::fill_n(reinterpret_cast<uint16_t *>(bytes), numElements, 0x7E00);
    break;
  case ElementKind::BF16:
    std::fill_n(reinterpret_cast<uint16_t *>(bytes), numElements, 0x7FC0);
    break;
  default:
    std::memset(bytes, 0x5A, getSizeInBytes());
    break;
  }
}

void HostBuffer::copyFrom(const HostBuffer &other) {
  std::memcpy(storage.get(), other.storage.get(),
              std::min(getSizeInBytes(), other.getSizeInBytes()));
}

double HostBuffer::getAsDouble(int64_t i) const {
  const uint8_t *bytes = storage.get();
  switch (kind) {
  case ElementKind::F64: return reinterpret_cast<const double *>(bytes)[i];
  case ElementKind::F32: return reinterpret_cast<const float *>(bytes)[i];
  case ElementKind::F16:
    return halfBitsToFloat(reinterpret_cast<const uint16_t *>(bytes)[i]);
  case ElementKind::BF16:
    return bfloatBitsToFloat(reinterpret_cast<const uint16_t *>(bytes)[i]);
  case ElementKind::I64: return double(reinterpret_cast<const int64_t *>(bytes)[i]);
  case ElementKind::I32: return reinterpret_cast<const int32_t *>(bytes)[i];
  case ElementKind::I16: return reinterpret_cast<const int16_t *>(bytes)[i];
  case ElementKind::I8: return reinterpret_cast<const int8_t *>(bytes)[i];
  case ElementKind::I1: return bytes[i] & 1;
  }
  return 0;
}

double ke::relativeL2Error(const HostBuffer &actual, const HostBuffer &expected) {
  double diff = 0, norm = 0;
  int64_t n = std::min(actual.getNumElements(), expected.getNumElements());
  for (int64_t i = 0; i < n; ++i) {
    double a = actual.getAsDouble(i), e = expected.getAsDouble(i);
    if (!std::isfinite(a) && std::isfinite(e))
      return std::numeric_limits<double>::infinity();
    if (!std::isfinite(e))
      continue; // the reference overflowed too: nothing to compare
    diff += (a - e) * (a - e);
    norm += e * e;
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

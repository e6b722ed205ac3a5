//===- GpuDevice.h - What CUDA and HIP devices share ------------*- C++ -*-===//
//
// A CUDA device and an AMD GPU are described by the same core fields (name,
// multiprocessors, caches, memory, bandwidth), which the probe's child
// writes to the same JSON keys, and an open device of either kind holds its
// runtime's table and that description the same way. CudaDeviceInfo and
// HipDeviceInfo (ke/Runtime/CudaRunner.h, HipRunner.h) add what only their
// runtime reports; the common part is written once here.
//
//===----------------------------------------------------------------------===//
#ifndef KE_RUNTIME_GPUDEVICE_H
#define KE_RUNTIME_GPUDEVICE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

namespace ke {

/// A field a runtime adds to GpuDeviceInfo, with its JSON key, so that one
/// table per runtime serves both toJSON and fromJSON. An integer or a
/// string; a const one can only be written.
class GpuInfoField {
public:
  /// A `required` field must be in a description, with its type, for the
  /// description to read.
  template <typename Field>
  GpuInfoField(const char *key, Field &field, bool required = false)
      : key(key), required(required), source(&field), target(getTarget(field)),
        toValue([](const void *field) {
          return llvm::json::Value(*static_cast<const Field *>(field));
        }),
        fromValue([](void *field, const llvm::json::Value &value) {
          using Type = std::remove_const_t<Field>;
          if constexpr (std::is_same_v<Type, std::string>) {
            std::optional<llvm::StringRef> text = value.getAsString();
            if (text && field)
              *static_cast<Type *>(field) = text->str();
            return text.has_value();
          } else {
            std::optional<int64_t> number = value.getAsInteger();
            if (number && field)
              *static_cast<Type *>(field) = Type(*number);
            return number.has_value();
          }
        }) {}

  /// Sets `key` in `o` to the field's value.
  void write(llvm::json::Object &o) const { o[key] = toValue(source); }
  /// Whether `o` has `key` with the field's type.
  bool isIn(const llvm::json::Object &o) const;
  /// Reads the field from `o` where it is there, with its type.
  void read(const llvm::json::Object &o) const;
  bool isRequired() const { return required; }

private:
  /// Where read() writes: null for a const field.
  template <typename Field> static void *getTarget(Field &field) {
    if constexpr (std::is_const_v<Field>)
      return nullptr;
    else
      return &field;
  }

  const char *key;
  bool required;
  const void *source;
  void *target;
  llvm::json::Value (*toValue)(const void *field);
  bool (*fromValue)(void *field, const llvm::json::Value &value);
};

/// What ke reads off any GPU; CudaDeviceInfo and HipDeviceInfo derive.
struct GpuDeviceInfo {
  int ordinal = 0;
  /// "NVIDIA H200", "AMD Instinct MI300X".
  std::string name;
  /// Streaming multiprocessors (CUDA) or compute units (AMD).
  unsigned multiprocessors = 0;
  unsigned maxThreadsPerBlock = 0;
  uint64_t l2CacheBytes = 0;
  uint64_t totalMemoryBytes = 0;
  /// Theoretical DRAM bandwidth from memory clock and bus width (0 when the
  /// runtime does not report them).
  double peakBandwidthBytesPerSecond = 0;

  /// Bytes per second from the memory clock in kHz and the bus width in
  /// bits, at double data rate.
  static double getPeakBandwidth(int memoryClockKHz, int memoryBusWidthBits);

protected:
  /// The fields above ("ordinal", "name", "multiprocessors",
  /// "max_threads_per_block", "l2_cache_bytes", "total_memory_bytes",
  /// "peak_bandwidth_bytes_per_second"), `chip` as "chip" and a runtime's
  /// `own` fields, as JSON.
  llvm::json::Value toJSONWith(std::string chip,
                               llvm::ArrayRef<GpuInfoField> own) const;
  /// Reads the fields above and `own` from `value` into `info`, leaving
  /// those it lacks as they are; false, reading nothing, when `value` is
  /// not an object with a "name" and every required field of `own`.
  static bool readJSONWith(const llvm::json::Value &value, GpuDeviceInfo &info,
                           llvm::ArrayRef<GpuInfoField> own);
  /// An `Info` read by readJSONWith with the fields `getOwnFields` lists;
  /// fails with `malformed` where that returns false.
  template <typename Info, typename Fields>
  static llvm::Expected<Info> fromJSONWith(const llvm::json::Value &value,
                                           Fields (*getOwnFields)(Info &),
                                           const char *malformed) {
    Info info;
    if (!readJSONWith(value, info, getOwnFields(info)))
      return llvm::createStringError(llvm::inconvertibleErrorCode(), malformed);
    return info;
  }
};

/// An open GPU: the runtime's table `Api` and what it reports, `Info`.
/// CudaDevice and HipDevice derive and add what their runtime needs.
template <typename Info, typename Api> class GpuDevice {
public:
  GpuDevice(const GpuDevice &) = delete;
  GpuDevice &operator=(const GpuDevice &) = delete;

  const Info &getInfo() const { return info; }
  const Api &getApi() const { return *api; }

protected:
  GpuDevice(const Api &api, int ordinal) : api(&api) { info.ordinal = ordinal; }
  ~GpuDevice() = default;

  const Api *api = nullptr;
  Info info;
};

} // namespace ke

#endif // KE_RUNTIME_GPUDEVICE_H

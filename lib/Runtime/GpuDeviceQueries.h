//===- GpuDeviceQueries.h - Reading a GPU's description ---------*- C++ -*-===//
//
// openCudaDevice and openHipDevice ask their runtime the same questions
// (is the ordinal one of the devices, the name, a list of attributes, the
// memory bandwidth and size, the version) through functions of the same
// types and other names, and word their failures the same way
// ("cuDeviceGetAttribute(memory clock): ..."): the asking is written once
// here, each runtime passing its functions.
//
// Private to lib/Runtime.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_RUNTIME_GPUDEVICEQUERIES_H
#define KE_LIB_RUNTIME_GPUDEVICEQUERIES_H

#include "GpuApi.h"

#include "ke/Runtime/GpuDevice.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <type_traits>

namespace ke {

/// One device attribute to read: its number in the runtime's enumeration,
/// how messages name it, and the field it fills.
class GpuDeviceAttribute {
public:
  /// `field` takes the runtime's int; an unsigned field takes it as the
  /// unsigned it is.
  template <typename Field>
  GpuDeviceAttribute(int number, const char *what, Field &field)
      : number(number), what(what), field(&field),
        assign([](void *field, int value) {
          if constexpr (std::is_unsigned_v<Field>)
            *static_cast<Field *>(field) = Field(unsigned(value));
          else
            *static_cast<Field *>(field) = Field(value);
        }) {}

  int number;
  const char *what;
  void set(int value) const { assign(field, value); }

private:
  void *field;
  void (*assign)(void *field, int value);
};

/// An error "no <what> #<ordinal> (this machine has <count>)" when
/// `ordinal` is not one of `count` devices.
llvm::Error checkDeviceOrdinal(llvm::StringRef what, int ordinal, int count);

/// The functions of a runtime that describe a device, and their names for
/// messages. They take the device as an int (a CUdevice, or HIP's ordinal)
/// and have these types in both runtimes.
struct GpuDeviceFunctions {
  int (*getName)(char *name, int length, int device);
  int (*getAttribute)(int *value, int attribute, int device);
  int (*getTotalMemory)(size_t *bytes, int device);
  int (*getVersion)(int *version);
  const char *getNameName, *getAttributeName, *getTotalMemoryName,
      *getVersionName;
  /// The runtime's numbers for the memory clock (kHz) and bus width (bits).
  int memoryClockAttribute, memoryBusWidthAttribute;
};

/// Reads, in this order, stopping at the first error: the name of `device`
/// (255 characters at most), `attributes` into their fields, the memory
/// clock and bus width into the peak bandwidth, the total memory, and the
/// runtime's version into `version`. Errors are "<function>: <describe>",
/// for an attribute "<getAttributeName>(<what>): <describe>".
llvm::Error queryDeviceInfo(const GpuApi &api,
                            const GpuDeviceFunctions &functions, int device,
                            llvm::ArrayRef<GpuDeviceAttribute> attributes,
                            GpuDeviceInfo &info, int &version);

} // namespace ke

#endif // KE_LIB_RUNTIME_GPUDEVICEQUERIES_H

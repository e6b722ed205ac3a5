//===- GpuDeviceQueries.h - Reading a GPU's description ---------*- C++ -*-===//
//
// openCudaDevice and openHipDevice ask their runtime the same questions
// (is the ordinal one of the devices, the name, a list of attributes, the
// memory bandwidth and size) through differently named functions, and word
// their failures the same way ("cuDeviceGetAttribute(memory clock): ..."): the
// asking is written once here, each runtime passing its calls.
//
// Private to lib/Runtime.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_RUNTIME_GPUDEVICEQUERIES_H
#define KE_LIB_RUNTIME_GPUDEVICEQUERIES_H

#include "GpuApi.h"

#include "ke/Runtime/GpuDevice.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
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

/// The device's name, through `getName(buffer, length)` (`function` names
/// it in the error); 255 characters at most.
llvm::Expected<std::string>
queryDeviceName(const GpuApi &api, llvm::StringRef function,
                llvm::function_ref<int(char *name, int length)> getName);

/// How one runtime answers what ke asks every GPU, with the names of its
/// functions for messages ("cuDeviceGetAttribute(memory clock): ...").
struct GpuDeviceCalls {
  const char *getAttributeName;
  llvm::function_ref<int(int *value, int number)> getAttribute;
  /// The runtime's numbers for the memory clock (kHz) and bus width (bits).
  int memoryClockAttribute, memoryBusWidthAttribute;
  const char *getTotalMemoryName;
  llvm::function_ref<int(size_t *bytes)> getTotalMemory;
};

/// Reads `attributes` in order into their fields, then the memory clock and
/// bus width into `info`'s peak bandwidth, then its total memory. Fails at
/// the first error, with "<getAttributeName>(<what>): <describe>" or
/// "<getTotalMemoryName>: <describe>".
llvm::Error queryDeviceInfo(const GpuApi &api, const GpuDeviceCalls &calls,
                            llvm::ArrayRef<GpuDeviceAttribute> attributes,
                            GpuDeviceInfo &info);

} // namespace ke

#endif // KE_LIB_RUNTIME_GPUDEVICEQUERIES_H

//===- GpuBinaryFile.h - A lowered GPU kernel group in a file ---*- C++ -*-===//
//
// Parallel builds (docs/tuning.md) lower each candidate in a child of its
// own and measure it in another: the build child writes the lowered kernel
// group (GpuKernelBinary: the device image and the launches) to a file, the
// measuring child reads it back. JSON, the image in base64.
//
// Private to lib/Measure.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_MEASURE_GPUBINARYFILE_H
#define KE_LIB_MEASURE_GPUBINARYFILE_H

#include "ke/Codegen/GpuKernel.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace ke {

/// Writes `binary` to `path`.
llvm::Error writeGpuKernelBinary(llvm::StringRef path,
                                 const GpuKernelBinary &binary);
/// Reads what writeGpuKernelBinary wrote.
llvm::Expected<GpuKernelBinary> readGpuKernelBinary(llvm::StringRef path);

} // namespace ke

#endif // KE_LIB_MEASURE_GPUBINARYFILE_H

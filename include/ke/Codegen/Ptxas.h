//===- Ptxas.h - Assembling PTX with NVIDIA's ptxas -------------*- C++ -*-===//
//
// ke emits PTX itself and runs NVIDIA's ptxas (from a CUDA toolkit or the
// pinned pip wheel, scripts/fetch-ptxas.sh) to make cubins and to read each
// kernel's registers and spills. lib/Codegen/Ptxas.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KE_CODEGEN_PTXAS_H
#define KE_CODEGEN_PTXAS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace ke {

/// The ptxas to run: $KE_PTXAS when set, else `ptxas` on PATH; empty when
/// there is none.
std::string findPtxas();

/// What ptxas -v says about one kernel.
struct PtxasKernelReport {
  std::string kernelName;
  unsigned registers = 0;
  uint64_t spillStoreBytes = 0, spillLoadBytes = 0;
  uint64_t sharedMemoryBytes = 0;
};

/// Parses the output of `ptxas -v`.
llvm::SmallVector<PtxasKernelReport> parsePtxasReport(llvm::StringRef log);

/// Runs `ptxas -arch=<chip> -v` on `ptx`; returns the cubin and sets `log`
/// to ptxas's messages. Fails with the messages in `log`.
mlir::FailureOr<std::string> assemblePtx(llvm::StringRef ptx,
                                         llvm::StringRef chip,
                                         std::string &log);

} // namespace ke

#endif // KE_CODEGEN_PTXAS_H

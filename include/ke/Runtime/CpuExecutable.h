//===- CpuExecutable.h - JIT-compiled kernels on this CPU -------*- C++ -*-===//
//
// Compiles a kernel module that is already in the LLVM dialect with MLIR's
// ExecutionEngine (ORC JIT, -O3, tuned for this host's CPU and features) and
// calls _mlir_ciface_kernel with one memref descriptor per argument. Kernels
// with OpenMP loops load LLVM's OpenMP runtime (libomp).
//
//===----------------------------------------------------------------------===//
#ifndef KE_RUNTIME_CPUEXECUTABLE_H
#define KE_RUNTIME_CPUEXECUTABLE_H

#include "ke/Runtime/HostBuffer.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace ke {

/// Where LLVM's OpenMP runtime is: $KE_LIBOMP, else the first of the usual
/// Debian/Ubuntu paths that exists.
std::optional<std::string> findOpenMPRuntime();

/// The function that JIT-linked code gets for `memrefCopy` (MLIR's copy
/// between non-contiguous memrefs): ke's own, so that no LLVM runtime
/// library is needed. For JITs other than CpuExecutable (the C API).
void *getMemrefCopyFunction();

class CpuExecutable {
public:
  ~CpuExecutable();
  /// JIT-compiles `llvmModule` (LLVM dialect). Fails with the JIT's message.
  static llvm::Expected<std::unique_ptr<CpuExecutable>>
  create(mlir::ModuleOp llvmModule);

  /// Calls the kernel on `buffers`, in kernel argument order.
  llvm::Error run(llvm::MutableArrayRef<HostBuffer> buffers);

private:
  CpuExecutable() = default;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  /// The packed entry point, looked up (and so compiled: ORC materializes
  /// on lookup) in create(), so that no call pays for code generation.
  void (*entry)(void **) = nullptr;
};

} // namespace ke

#endif // KE_RUNTIME_CPUEXECUTABLE_H

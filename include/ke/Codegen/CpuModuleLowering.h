//===- CpuModuleLowering.h - A whole module to LLVM on CPUs -----*- C++ -*-===//
//
// The CPU lowering of a user module, as `ke-opt compile` runs it after
// --ke-apply-tuned-schedules: any number of functions on tensors, each with
// any number of scheduled groups. It is the kernel pipeline of CpuPipeline.h
// (the same passes, taken from getCpuLoweringPipeline so records stay
// comparable) with what a whole program needs besides:
//   - buffers that bufferization allocates are freed (the buffer
//     deallocation pipeline); kernels work in place and allocate nothing;
//   - every scf.forall runs on the OpenMP threads its own schedule asked for
//     (kNumThreadsAttr), instead of one thread count for the module; loops
//     without the attribute run sequentially, as in a kernel without the
//     `threads` knob;
//   - ops no schedule decomposed (linalg.softmax) are decomposed so that
//     they lower to loops;
//   - public functions get llvm.emit_c_interface, so C callers can pass
//     memref descriptors (_mlir_ciface_<name>).
//
//===----------------------------------------------------------------------===//
#ifndef KE_CODEGEN_CPUMODULELOWERING_H
#define KE_CODEGEN_CPUMODULELOWERING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace ke {

/// The discardable attribute that --ke-apply-tuned-schedules puts on the
/// scf.forall loops of a schedule with OpenMP threads: the thread count.
inline constexpr llvm::StringLiteral kNumThreadsAttr = "ke.num_threads";

/// Options of lowerModuleToLLVM.
struct ModuleLoweringOptions {
  /// Give public functions a C interface (llvm.emit_c_interface).
  bool emitCInterface = true;
  /// Run loops with a thread count on OpenMP threads. When false every
  /// scf.forall becomes a sequential loop and the code needs no OpenMP
  /// runtime (e.g. cross-compiled objects for a machine whose libomp is
  /// not at hand).
  bool openmp = true;
  /// The schedules use scalable vectors (generic aarch64): their dynamic
  /// tiles bufferize to self-copies (memref.copy %tile, %tile) that only a
  /// canonicalization after CSE folds away; left alone, they become calls
  /// to the runtime's memrefCopy. Off for fixed-length targets, whose
  /// pipeline stays the tuned one.
  bool scalableVectors = false;
  /// Destination-passing style for hosts that own the result buffers (the
  /// C API, the Python package): upstream buffer-results-to-out-params runs
  /// right after bufferization, so every function returns nothing and takes
  /// one more memref argument per result, after its inputs (static shapes
  /// only). Results allocated inside the function are replaced by the
  /// caller's buffer (hoist-static-allocs), others are copied into it. Off
  /// by default: `ke-opt compile` keeps returning buffers the caller frees.
  bool resultsToOutParams = false;
};

/// Bufferizes and lowers `module` to the LLVM dialect in place. Errors are
/// reported as diagnostics.
mlir::LogicalResult
lowerModuleToLLVM(mlir::ModuleOp module,
                  const ModuleLoweringOptions &options = {});

} // namespace ke

#endif // KE_CODEGEN_CPUMODULELOWERING_H

//===- Kernel.h - A workload as a standalone, callable function -*- C++ -*-===//
//
// To compile, run and time a workload on its own, ke clones its anchor, and
// the neighbours a schedule fuses into its tiles (linalg.fill producers of
// its inits and one elementwise consumer of its result), into a module with a
// single function, @kernel, whose arguments are memrefs: one per shaped value
// the group takes from outside, in order of first use. The anchor carries the
// unit attribute `ke.anchor`, fused producers `ke.producer` and the consumer
// `ke.consumer`, so that schedules can match them. With row fusion (GPU
// targets), an elementwise anchor also takes the row reductions whose results
// it reads (a norm's mean and variance, a log-softmax's maximum and sum),
// each tagged `ke.row_reduction`, with their fills: one kernel then reads
// each row once instead of once per reduction. On tensors, the function
// wraps its arguments with bufferization.to_tensor and writes each result
// into its init buffer with bufferization.materialize_in_destination, so after
// bufferization the kernel works in place on the caller's buffers. The
// function has llvm.emit_c_interface, so the runner calls
// _mlir_ciface_kernel with one memref descriptor per argument.
//
//===----------------------------------------------------------------------===//
#ifndef KE_WORKLOAD_KERNEL_H
#define KE_WORKLOAD_KERNEL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace ke {

/// The name of the kernel function in a kernel module.
inline constexpr llvm::StringLiteral kKernelFunctionName = "kernel";

/// How the kernel uses one of its buffer arguments.
enum class BufferRole {
  Input,        ///< read only
  Accumulator,  ///< a result buffer whose initial value is read
  Output,       ///< a result buffer that is only written
  Scratch       ///< written by an intermediate op; not a result
};

/// One memref argument of @kernel.
struct KernelArgument {
  BufferRole role = BufferRole::Input;
  llvm::SmallVector<int64_t> shape;
  mlir::Type elementType;

  /// True for the buffers that hold the kernel's results (and are checked).
  bool isResult() const {
    return role == BufferRole::Accumulator || role == BufferRole::Output;
  }
  /// Elements in the buffer (shapes are static).
  int64_t numElements() const;
};

/// A workload's anchor as a standalone module.
struct KernelModule {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  llvm::SmallVector<KernelArgument> arguments;
  /// The value of the source module that each argument stands for (the
  /// group's operands from outside it, in argument order): what a whole-
  /// model compile passes for each buffer.
  llvm::SmallVector<mlir::Value> argumentValues;
  /// The group's results, each with the index of the argument it is written
  /// into (its init, followed through the group's fills).
  llvm::SmallVector<std::pair<mlir::Value, unsigned>> resultArguments;
};

/// Which neighbours of an anchor join its kernel. Which one a target uses is
/// decided in one place, getKernelFusion (ke/TunedSchedules).
enum class KernelFusion {
  /// The anchor alone.
  None,
  /// The fills that produce its inits and its single elementwise consumer
  /// (every target).
  Elementwise,
  /// Also, for an elementwise anchor, the row reductions whose results it
  /// reads, with their fills (getRowReductions): CPU targets (cpu.rows gives
  /// each block of rows one pass).
  RowReductions,
  /// RowReductions, and the accumulator of an anchor whose result only its
  /// group reads is no kernel argument (GPU targets: gpu.rownorm gives each
  /// row a block, and an anchor fused into its consumer's tiles keeps its
  /// accumulator tile by tile in registers).
  RowReductionsInternalAccumulators,
};

/// Whether `fusion` groups row reductions with their elementwise reader.
inline bool fusesRowReductions(KernelFusion fusion) {
  return fusion == KernelFusion::RowReductions ||
         fusion == KernelFusion::RowReductionsInternalAccumulators;
}

/// The operation that combines the accumulator in a body of the form
/// `yield combine(acc, f(inputs...))`: one associative, commutative
/// operation whose neutral element MLIR knows, taking the accumulator (used
/// nowhere else) and a value computed from the inputs alone. Each thread
/// of a parallel schedule runs the whole body over its elements and the
/// partial results are combined by `combine` alone, so a body such as
/// `acc + x*x` or `acc + (x-mean)^2` qualifies, while `(acc + x) * 2` does
/// not (the threads' partials would be scaled twice). Null otherwise.
mlir::Operation *getReductionCombiner(mlir::Operation *op);

/// The row reductions an elementwise `anchor` reads, directly or through
/// one another, in program order, when all of them qualify: a linalg op on
/// tensors in the anchor's block whose last loop alone is a reduction over
/// a row of the anchor's iteration space (the anchor's rank, read by the
/// anchor and by one another as (d0, ..., dn-1) -> (d0, ..., dn-2)), with
/// one f32 init made by a linalg.fill used by nothing else, whose result
/// only the anchor and the other reductions read. Everything must be f32.
/// Rows that do not split into whole warps or wavefronts (a multiple of 64
/// elements) take a kernel built by a pass (ke-gpu-row-norm), which needs
/// each reduction's combiner (getReductionCombiner, a float one) and
/// projected-permutation maps on the anchor. Empty when there are none or
/// one does not qualify.
llvm::SmallVector<mlir::Operation *>
getRowReductions(mlir::Operation *anchor);

/// The row length whose multiples get gpu.rownorm's tiled schedule (whole
/// warps or wavefronts); other rows get the kernel ke-gpu-row-norm builds.
inline constexpr int64_t kTiledRowMultiple = 64;

/// The ops that go into the kernel of `anchor`, in program order: with
/// Elementwise fusion, the fills that produce its inits, the anchor, and its
/// single elementwise consumer when the consumer reads the anchor's result
/// with an identity map (so a tile of one is a tile of the other); with
/// RowReductions, for an elementwise anchor with row reductions
/// (getRowReductions), the reductions and their fills, the anchor and the
/// fills of its inits. On memrefs, or with None, just the anchor.
llvm::SmallVector<mlir::Operation *>
getKernelGroup(mlir::Operation *anchor,
               KernelFusion fusion = KernelFusion::Elementwise);

/// The anchor, other than `op`, whose kernel group (getKernelGroup) holds
/// `op`, followed to the outermost such anchor: the user of a fill that
/// initializes it, the producer of an elementwise consumer fused into it,
/// the elementwise reader of a fused row reduction. Null when there is
/// none. Such an op is compiled and tuned as part of that anchor's kernel,
/// not on its own.
mlir::Operation *
getFusingAnchor(mlir::Operation *op,
                KernelFusion fusion = KernelFusion::Elementwise);

/// The first occurrence of the workload keyed `key` in `op`'s module,
/// starting with `op` itself, that anchors a kernel group of its own
/// (getFusingAnchor is null); null when every occurrence is fused into
/// another anchor's group. A workload can be fused at one occurrence and a
/// group of its own at another (GroupNorm's two row sums of one shape).
mlir::Operation *getFirstGroupAnchor(mlir::Operation *op, llvm::StringRef key,
                                     KernelFusion fusion);

/// Builds the kernel module of `anchor` (and its group) in `anchor`'s
/// context. Fails, with a diagnostic at the anchor, for dynamic shapes and
/// for scalar values that are not constants (the kernel ABI passes buffers
/// only).
mlir::FailureOr<KernelModule>
buildKernelModule(mlir::Operation *anchor,
                  KernelFusion fusion = KernelFusion::Elementwise);

/// The anchor inside a kernel module (the op with `ke.anchor`).
mlir::Operation *findKernelAnchor(mlir::ModuleOp module);

/// Attribute names that mark the roles of ops in a kernel.
inline constexpr llvm::StringLiteral kAnchorAttr = "ke.anchor";
inline constexpr llvm::StringLiteral kProducerAttr = "ke.producer";
inline constexpr llvm::StringLiteral kConsumerAttr = "ke.consumer";
/// A row reduction fused into an elementwise anchor's kernel.
inline constexpr llvm::StringLiteral kRowReductionAttr = "ke.row_reduction";

} // namespace ke

#endif // KE_WORKLOAD_KERNEL_H

//===- RuleSupport.h - What the CPU and GPU sketch rules share --*- C++ -*-===//
//
// Knob names and default picks, the fused neighbours of an anchor and the
// mapping of anchor tiles onto its result: the same logic for every target
// family, written once here (RuleSupport.cpp). Family-specific helpers are
// in CpuSupport.h and GpuSupport.h.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_SKETCH_RULESUPPORT_H
#define KE_LIB_SKETCH_RULESUPPORT_H

#include "ScriptWriter.h"

#include "ke/Sketch/KnobSpace.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <string>

namespace ke {

/// The knob of `level` on anchor loop `loop`: "block.d3", "kvec.d2", ...
std::string loopKnobName(llvm::StringRef level, unsigned loop);

/// A type as MLIR prints it ("f32", "bf16", "i8").
std::string typeName(mlir::Type type);

/// Index of the first choice >= value (the last when none is).
unsigned nearestChoice(llvm::ArrayRef<int64_t> choices, int64_t value);

/// Index of the largest choice (choices ascending) that divides `extent`
/// and is at most `value` (the first choice when none is).
unsigned largestDivisorChoice(llvm::ArrayRef<int64_t> choices, int64_t extent,
                              int64_t value);

/// True for a linalg op on static tensors with at least one result: the
/// ops the tiling rules (cpu.tile, gpu.tile, gpu.elementwise) can take.
bool isStaticTensorOp(mlir::linalg::LinalgOp op);

/// The input type of a linalg.softmax over the last dimension of a static
/// tensor of rank 2 or more; null for any other op.
mlir::RankedTensorType getLastDimSoftmaxType(mlir::Operation *anchor);

/// The fused neighbours of a kernel's anchor (see ke/Workload/Kernel.h).
struct KernelNeighbours {
  /// The elementwise consumer (the last op marked as one).
  mlir::Operation *consumer = nullptr;
  /// The first fill of the anchor's inits.
  mlir::Operation *firstProducer = nullptr;
  bool hasProducers = false;
  /// Row reductions fused into an elementwise anchor (gpu.rownorm's).
  unsigned rowReductions = 0;
};
KernelNeighbours findKernelNeighbours(mlir::Operation *anchor);

/// A kernel's ops as script handles.
struct KernelHandles {
  KernelNeighbours neighbours;
  /// The anchor; its elementwise consumer and the fills of its inits, empty
  /// where the kernel has none.
  std::string anchor, consumer, producers;
};

/// Matches the anchor (by its name and attribute), then the consumer and
/// the producers where the kernel has them, in that order.
KernelHandles matchKernel(ScriptWriter &w, mlir::Operation *anchor);

/// Anchor-loop tile sizes as tile sizes of an op whose loops are the
/// dimensions of the anchor's first result (a fill of its init, its
/// elementwise consumer); `loopsOut` receives the anchor loop of each.
llvm::SmallVector<int64_t>
mapToResult(mlir::linalg::LinalgOp op, llvm::ArrayRef<int64_t> anchorTiles,
            llvm::SmallVectorImpl<unsigned> *loopsOut = nullptr);

/// Anchor-loop tile sizes as tile sizes of the anchor's elementwise
/// `consumer`, which reads the anchor's result through a permutation (the
/// identity, or a channels-first tail after a channels-last convolution);
/// `loopsOut` receives the anchor loop of each consumer loop.
llvm::SmallVector<int64_t>
mapToConsumer(mlir::linalg::LinalgOp op, mlir::Operation *consumer,
              llvm::ArrayRef<int64_t> anchorTiles,
              llvm::SmallVectorImpl<unsigned> *loopsOut = nullptr);

} // namespace ke

#endif // KE_LIB_SKETCH_RULESUPPORT_H

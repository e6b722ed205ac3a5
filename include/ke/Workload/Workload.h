//===- Workload.h - Tuning workloads extracted from linalg IR ---*- C++ -*-===//
//
// A workload is one linalg op (the anchor) that ke tunes a schedule for,
// together with the elementwise producers and consumers that a schedule can
// fuse into the anchor's tiles. Identical anchors share one canonical key, so
// a model with 30 identical matmuls is one workload that occurs 30 times.
// See docs/workloads.md for the key, flop and byte conventions.
//
//===----------------------------------------------------------------------===//
#ifndef KE_WORKLOAD_WORKLOAD_H
#define KE_WORKLOAD_WORKLOAD_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ke {

/// What kind of computation an anchor is; sketch rules are chosen by kind.
enum class WorkloadKind {
  Contraction, ///< matmul, batch_matmul, matvec, transposed variants, ...
  Convolution, ///< conv_1d/2d/3d in any layout, depthwise convolutions
  Pooling,     ///< max/sum/min pooling
  Reduction,   ///< anything else with a reduction loop (sum, max, argmax)
  Softmax,     ///< linalg.softmax
  Elementwise, ///< all-parallel ops whose body computes something
  Fill,        ///< linalg.fill
  DataMovement ///< copy, transpose, broadcast: bodies that only yield
};

/// Returns the lower-case name used in JSON ("contraction", ...).
llvm::StringRef stringifyWorkloadKind(WorkloadKind kind);

/// One operand of the anchor as the key and cost model see it.
struct OperandInfo {
  /// True for DPS inits (outputs), false for inputs.
  bool isInit = false;
  /// Static sizes; ShapedType::kDynamic for dynamic ones; empty for scalars.
  llvm::SmallVector<int64_t> shape;
  /// Element type as MLIR prints it ("f32", "bf16", "i8").
  std::string elementType;
  /// "tensor", "memref" or "scalar".
  std::string container;
};

/// An elementwise op that can be fused into the anchor's tiles.
struct FusionCandidate {
  /// True when the candidate produces one of the anchor's operands; false
  /// when it consumes one of the anchor's results.
  bool isProducer = true;
  /// The anchor operand it produces (producers) or the anchor result it
  /// reads (consumers).
  unsigned anchorOperandOrResult = 0;
  std::string opName;
  /// The candidate's own canonical key.
  std::string key;

  bool operator==(const FusionCandidate &other) const {
    return isProducer == other.isProducer &&
           anchorOperandOrResult == other.anchorOperandOrResult &&
           key == other.key;
  }
};

/// A tuning workload: one canonical anchor and every place it occurs.
struct Workload {
  /// Canonical key: 32 hex digits of a SHA-256 of the anchor's structure.
  std::string key;
  std::string opName;
  WorkloadKind kind = WorkloadKind::Elementwise;
  llvm::SmallVector<OperandInfo> operands;
  /// Floating-point (or integer) operations of one execution; unset when a
  /// shape is dynamic or the count overflows 64 bits.
  std::optional<uint64_t> flops;
  /// Bytes of one execution: each operand whose value the computation uses
  /// is read once (inputs; accumulating inits), each result written once.
  std::optional<uint64_t> bytesRead;
  std::optional<uint64_t> bytesWritten;
  /// Fusable elementwise neighbours over all occurrences, without repeats.
  llvm::SmallVector<FusionCandidate> fusible;
  /// Where the anchor occurs; size() is the occurrence count.
  llvm::SmallVector<mlir::Location> locations;
  /// The first occurrence, for later stages that need the IR.
  mlir::Operation *firstOp = nullptr;

  unsigned count() const { return locations.size(); }
};

/// True for the ops ke extracts workloads from: every linalg structured op
/// (named or generic, on tensors or memrefs) and linalg.softmax.
bool isWorkloadAnchor(mlir::Operation *op);

/// Classifies an anchor.
WorkloadKind classifyWorkload(mlir::Operation *op);

/// The canonical text the key hashes: op name, operand types, indexing maps,
/// iterator types, inherent attributes and the body with SSA values numbered
/// by position. Free of SSA names, locations and symbol names.
std::string getCanonicalSignature(mlir::Operation *anchor);

/// The canonical key of an anchor: 32 hex digits of SHA-256(signature).
std::string computeWorkloadKey(mlir::Operation *anchor);

/// Operations per execution (see docs/workloads.md); std::nullopt for
/// dynamic shapes or overflow.
std::optional<uint64_t> countFlops(mlir::Operation *anchor);

/// Bytes read and written by one execution; std::nullopt for dynamic shapes.
struct ByteCounts {
  uint64_t read = 0;
  uint64_t written = 0;
};
std::optional<ByteCounts> countBytes(mlir::Operation *anchor);

/// The elementwise producers and consumers a schedule can fuse into
/// `anchor`'s tiles.
llvm::SmallVector<FusionCandidate> findFusionCandidates(mlir::Operation *anchor);

/// Builds one workload for a single anchor occurrence.
Workload buildWorkload(mlir::Operation *anchor);

/// Collects the workloads of every anchor nested under `root`, merged by key
/// in order of first occurrence. Calling it on several roots with the same
/// `workloads` vector merges across files.
void collectWorkloads(mlir::Operation *root,
                      std::vector<Workload> &workloads);

/// Writes the workload as one JSON object (the `ke-opt workloads` format).
void printWorkloadJSON(const Workload &workload, llvm::raw_ostream &os);

} // namespace ke

#endif // KE_WORKLOAD_WORKLOAD_H

//===- ScriptWriter.h - Building transform scripts as text ------*- C++ -*-===//
//
// Sketch rules write scripts as text (the form that is stored, diffed and
// replayed); this helper keeps the boilerplate and SSA naming in one place.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_SKETCH_SCRIPTWRITER_H
#define KE_LIB_SKETCH_SCRIPTWRITER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace ke {

class ScriptWriter {
public:
  ScriptWriter();

  /// A fresh SSA name with the given stem: %stem0, %stem1, ...
  std::string fresh(llvm::StringRef stem);
  /// Appends one line of the named sequence body (indentation added).
  void line(const std::string &text);
  /// A comment line in the script, to make stored scripts readable.
  void comment(const std::string &text);
  /// Matches the ops called `opName` (any op when empty) that carry the unit
  /// attribute `attribute` (when not empty); returns the handle.
  std::string match(llvm::StringRef opName, llvm::StringRef attribute = "");
  /// tile_using_for of `target` by `sizes`: returns the tiled op's handle and
  /// appends one scf.for handle per non-zero size to `loops`. Sizes whose
  /// `scalable` flag is set are multiples of the run-time vscale (`[4]`).
  std::string tileUsingFor(const std::string &target,
                           llvm::ArrayRef<int64_t> sizes,
                           llvm::SmallVectorImpl<std::string> &loops,
                           llvm::ArrayRef<bool> scalable = {});
  /// tile_using_forall of `target` by `sizes`: returns the tiled op's handle
  /// and sets `forall` to the loop's.
  std::string tileUsingForall(const std::string &target,
                              llvm::ArrayRef<int64_t> sizes,
                              std::string &forall);
  /// fuse_into_containing_op: `producer` and `container` become the handles
  /// of the fused op and of the new containing loop.
  void fuseInto(std::string &producer, std::string &container);
  /// Fuses `producer` into the scf.for of `loop` (a handle typed
  /// !transform.op<"scf.for">, as tileUsingFor returns them).
  void fuseIntoLoop(std::string &producer, const std::string &loop);
  /// The handles tile_reduction_using_forall returns.
  struct ReductionTiles {
    std::string fill, partial, combine, forall;
  };
  /// tile_reduction_using_forall of `target` by `numThreads`, with the
  /// forall's `mapping` ("[#gpu.thread<x>]") when not empty.
  ReductionTiles tileReductionUsingForall(const std::string &target,
                                          llvm::ArrayRef<int64_t> numThreads,
                                          llvm::StringRef mapping = "");
  /// tile_reduction_using_for of `target` by `tileSizes`: the reduction
  /// carries one partial result per element of a tile across the loop and
  /// combines them once after it. (`forall` is the scf.for's handle.)
  ReductionTiles tileReductionUsingFor(const std::string &target,
                                       llvm::ArrayRef<int64_t> tileSizes);
  /// split_handle of `all` into `n` handles named after `stem`, in payload
  /// order.
  llvm::SmallVector<std::string> splitHandle(const std::string &all, size_t n,
                                             llvm::StringRef stem);
  /// bufferize_to_allocation of the destination of `target` into
  /// `memorySpace`, copying in with `memcpyOp` when not empty.
  void bufferizeDestination(const std::string &target,
                            llvm::StringRef memorySpace,
                            llvm::StringRef memcpyOp = "");
  /// transform.loop.peel of an scf.for handle; returns the handle of the
  /// main part (of type !transform.any_op).
  std::string peel(const std::string &loop);
  /// Vectorizes the payload function (static shapes only), then applies
  /// `patterns` (each the part after "transform.apply_patterns."), then CSE.
  void vectorizeFunction(llvm::ArrayRef<std::string> patterns,
                         bool vectorizePadding = false);
  /// transform.structured.vectorize of the ops of `target` with explicit
  /// (masked) vector sizes, `scalable` ones multiples of vscale.
  void vectorizeOps(const std::string &target, llvm::ArrayRef<int64_t> sizes,
                    llvm::ArrayRef<bool> scalable);
  /// Lowers the vector ops that vectorizeOps made in the payload function
  /// (masked transfers, contractions to outer products, which stay
  /// scalable), then CSE (no accumulator hoisting: see the definition).
  void lowerMaskedVectors();
  /// The complete module.
  std::string finish();

  /// "[a, b, c]"; with `scalable` flags, "[a, [b], c]".
  static std::string list(llvm::ArrayRef<int64_t> values,
                          llvm::ArrayRef<bool> scalable = {});
  /// The handle %root of the payload.
  static constexpr llvm::StringLiteral root = "%root";

private:
  std::string body;
  unsigned counter = 0;
};

} // namespace ke

#endif // KE_LIB_SKETCH_SCRIPTWRITER_H

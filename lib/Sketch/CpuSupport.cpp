//===- CpuSupport.cpp - What the CPU sketch rules share -------------------===//
//
// Kept out of the rules' files so that each rule file holds one rule, and
// out of SketchRegistry.cpp, which only lists the rules.
//
//===----------------------------------------------------------------------===//

#include "CpuSupport.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace ke;

Knob ke::makeThreadsKnob(unsigned cores, bool parallelByDefault) {
  Knob threads{"threads", {}, 0};
  for (unsigned t = 1; t < cores; t *= 2)
    threads.choices.push_back(t);
  threads.choices.push_back(cores);
  threads.defaultIndex = parallelByDefault ? threads.choices.size() - 1 : 0;
  return threads;
}

KnobSpace ke::makeRowKnobs(mlir::RankedTensorType type,
                           const TargetDescription &target,
                           int64_t buffersPerRow) {
  unsigned cores = std::max(1u, target.cpu.cores);
  KnobSpace space;
  bool parallelByDefault =
      cores > 1 && type.getNumElements() >= (int64_t(1) << 16);
  space.knobs.push_back(makeThreadsKnob(cores, parallelByDefault));
  int64_t rows = type.getDimSize(0);
  Knob tile{"forall.d0", tileCandidates(rows, rows), 0};
  // By default a block's rows and the row-sized buffers of its parts fit in
  // half of a core's share of L2: each part sweeps the block before the
  // next, and a block of a thread's whole share (2048 rows of 4096 at 4096
  // x 4096) went to memory between parts.
  int64_t rowBytes = std::max<int64_t>(
      1, type.getNumElements() / std::max<int64_t>(1, rows) *
             std::max(1u, type.getElementTypeBitWidth() / 8));
  uint64_t l2PerCore =
      target.cpu.l2Bytes / std::max(1u, target.cpu.l2SharedByCores);
  int64_t fitting = std::max<int64_t>(
      1, int64_t(l2PerCore / 2) / (buffersPerRow * rowBytes));
  tile.defaultIndex = nearestChoice(
      tile.choices,
      std::min<int64_t>(
          parallelByDefault ? llvm::divideCeil(rows, cores) : rows, fitting));
  space.knobs.push_back(tile);
  // Elements of a row handled at once: one to four vectors.
  int64_t cols = type.getShape().back();
  unsigned lanes = std::max(
      1u, target.cpu.vectorBits / std::max(8u, type.getElementTypeBitWidth()));
  Knob vec{"vec", {}, 0};
  for (int64_t v : tileCandidates(cols, 4 * lanes))
    if (v >= std::min<int64_t>(cols, 4))
      vec.choices.push_back(v);
  vec.defaultIndex = nearestChoice(vec.choices, lanes);
  space.knobs.push_back(vec);
  return space;
}

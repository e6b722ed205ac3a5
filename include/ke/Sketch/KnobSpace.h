//===- KnobSpace.h - The tunable parameters of a sketch ---------*- C++ -*-===//
//
// A sketch has named knobs, each with a finite, ordered list of candidate
// values. A knob assignment picks one index per knob; searching moves these
// indices (droplet search does coordinate descent on them), so neighbouring
// indices hold neighbouring values.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SKETCH_KNOBSPACE_H
#define KE_SKETCH_KNOBSPACE_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace ke {

/// One tunable parameter and its candidate values, in increasing order.
struct Knob {
  std::string name;
  llvm::SmallVector<int64_t> choices;
  /// Index into `choices` of the untuned default.
  unsigned defaultIndex = 0;
};

/// The knobs of one sketch, in a fixed order.
struct KnobSpace {
  llvm::SmallVector<Knob> knobs;

  /// Index of the knob called `name`, or -1.
  int find(llvm::StringRef name) const;
  /// Number of assignments (saturates at UINT64_MAX).
  uint64_t size() const;
  /// True when the space holds one schedule (no knobs, or one choice
  /// each): the tuner measures it once, the sampler never draws it.
  bool isSingleSchedule() const { return size() == 1; }
};

/// One value index per knob of a KnobSpace.
using KnobIndices = llvm::SmallVector<unsigned>;

/// Knob values looked up by name, for script emission.
class KnobAssignment {
public:
  KnobAssignment(const KnobSpace &space, const KnobIndices &indices)
      : space(&space), indices(indices) {}

  /// The value of knob `name`; `fallback` when the space has no such knob.
  int64_t get(llvm::StringRef name, int64_t fallback = 0) const;
  const KnobIndices &getIndices() const { return indices; }
  const KnobSpace &getSpace() const { return *space; }
  /// "name=value name=value ..." for logs and records.
  std::string str() const;

private:
  const KnobSpace *space;
  KnobIndices indices;
};

/// The default indices of every knob.
KnobIndices getDefaultIndices(const KnobSpace &space);

/// Tile-size candidates for a loop of `extent` iterations: 1, powers of two
/// and the divisors of `extent` up to `maxTile`, and `extent` itself when it
/// is at most `maxTile`; sorted, without repeats. Non-divisors are kept:
/// schedules peel the partial tiles.
llvm::SmallVector<int64_t> tileCandidates(int64_t extent, int64_t maxTile);

} // namespace ke

#endif // KE_SKETCH_KNOBSPACE_H

//===- KnobSpace.cpp - The tunable parameters of a sketch -----------------===//

#include "ke/Sketch/KnobSpace.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace ke;

int KnobSpace::find(llvm::StringRef name) const {
  for (auto [index, knob] : llvm::enumerate(knobs))
    if (knob.name == name)
      return static_cast<int>(index);
  return -1;
}

uint64_t KnobSpace::size() const {
  uint64_t total = 1;
  for (const Knob &knob : knobs)
    if (__builtin_mul_overflow(total, knob.choices.size(), &total))
      return std::numeric_limits<uint64_t>::max();
  return total;
}

int64_t KnobAssignment::get(llvm::StringRef name, int64_t fallback) const {
  int index = space->find(name);
  if (index < 0)
    return fallback;
  return space->knobs[index].choices[indices[index]];
}

std::string KnobAssignment::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      llvm::seq<size_t>(0, space->knobs.size()), os,
      [&](size_t i) {
        os << space->knobs[i].name << '=' << space->knobs[i].choices[indices[i]];
      },
      " ");
  return text;
}

KnobIndices ke::getDefaultIndices(const KnobSpace &space) {
  KnobIndices indices;
  for (const Knob &knob : space.knobs)
    indices.push_back(knob.defaultIndex);
  return indices;
}

llvm::SmallVector<int64_t> ke::tileCandidates(int64_t extent, int64_t maxTile) {
  llvm::SmallVector<int64_t> tiles;
  for (int64_t t = 1; t <= std::min(extent, maxTile); t *= 2)
    tiles.push_back(t);
  for (int64_t d = 3; d <= std::min(extent, maxTile); ++d)
    if (extent % d == 0)
      tiles.push_back(d);
  if (extent <= maxTile)
    tiles.push_back(extent);
  llvm::sort(tiles);
  tiles.erase(std::unique(tiles.begin(), tiles.end()), tiles.end());
  return tiles;
}

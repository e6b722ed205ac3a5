//===- LoopNestDescription.cpp - Tiling levels of a scheduled loop nest ---===//

#include "ke/Sketch/SketchRule.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace ke;

void LoopNestDescription::addLevel(TileLevelRole role,
                                   llvm::ArrayRef<int64_t> sizes,
                                   bool parallel) {
  llvm::ArrayRef<int64_t> enclosing =
      levels.empty() ? llvm::ArrayRef<int64_t>(ranges) : levels.back().tile;
  TileLevel level;
  level.role = role;
  level.parallel = parallel;
  for (auto [loop, extent] : llvm::enumerate(enclosing)) {
    int64_t size = loop < sizes.size() ? sizes[loop] : 0;
    // Tiling by more than the extent leaves one tile of the whole extent.
    int64_t tile = size <= 0 ? extent : std::min(size, extent);
    level.tile.push_back(tile);
    level.tripCounts.push_back(tile > 0 ? llvm::divideCeil(extent, tile) : 1);
  }
  levels.push_back(std::move(level));
}

const TileLevel *LoopNestDescription::findLevel(TileLevelRole role) const {
  for (const TileLevel &level : levels)
    if (level.role == role)
      return &level;
  return nullptr;
}

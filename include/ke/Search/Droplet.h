//===- Droplet.h - Coordinate descent on knob indices -----------*- C++ -*-===//
//
// Droplet search (docs/tuning.md, One workload) refines the best explored
// schedules: from the current point it measures a batch of neighbours
// (+-step on each knob's index, and some pairs of knobs), moves to the best
// neighbour only when Welch's t-test on their repeated timings says it is
// faster (p < 0.05), resets the step after a move and doubles it when the
// neighbourhood holds nothing better. A start point is done when the step
// outgrows every knob; the search then restarts from the next best explored
// candidate, and stops when a start point ends without improving the best
// (or when the budget runs out).
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_DROPLET_H
#define KE_SEARCH_DROPLET_H

#include "ke/Search/SearchTask.h"

#include "llvm/ADT/StringSet.h"

namespace ke {

struct DropletOptions {
  /// A move needs a one-sided Welch p-value below this.
  double significance = 0.05;
  /// Pair moves (two knobs at once) added to each batch, at most.
  unsigned maxPairs = 16;
  /// Start points tried at most.
  unsigned maxStarts = 4;
};

class DropletSearch {
public:
  explicit DropletSearch(SearchTask &task, DropletOptions options = {});

  /// Measures the next batch of neighbours (at most `maxTrials`) and moves
  /// when one is significantly faster. Returns how many were measured.
  unsigned runRound(unsigned maxTrials);
  /// True when the search stopped (no improvement, or nothing to start from).
  bool isFinished() const { return finished; }
  /// Moves accepted so far.
  unsigned getNumMoves() const { return moves; }

private:
  bool startNext();
  std::vector<Schedule> neighbours(const Schedule &center);

  SearchTask &task;
  DropletOptions options;
  std::optional<Schedule> current;
  unsigned step = 1;
  unsigned starts = 0, moves = 0;
  std::optional<double> bestAtStart;
  llvm::StringSet<> usedStarts;
  bool finished = false;
};

} // namespace ke

#endif // KE_SEARCH_DROPLET_H

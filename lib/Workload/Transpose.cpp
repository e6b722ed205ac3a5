//===- Transpose.cpp - A transpose as its fewest moved dimensions ---------===//

#include "ke/Workload/Transpose.h"

#include <cassert>

using namespace mlir;
using namespace ke;

unsigned MergedTranspose::inputInnermost() const {
  for (unsigned d = 0; d < rank(); ++d)
    if (permutation[d] == int64_t(rank()) - 1)
      return d;
  assert(false && "not a permutation");
  return 0;
}

/// Contiguous groups of `rank` dimensions: each dimension in `starts` opens
/// one, the others join the group before them (the first when they lead).
static SmallVector<ReassociationIndices>
groupsFrom(unsigned rank, ArrayRef<bool> starts) {
  SmallVector<ReassociationIndices> groups;
  for (unsigned d = 0; d < rank; ++d) {
    if (starts[d] || groups.empty())
      groups.emplace_back();
    groups.back().push_back(d);
  }
  // Leading dimensions before the first start joined a group of their own
  // that the first start must take over.
  if (groups.size() > 1 && !starts[groups[0][0]] &&
      llvm::none_of(groups[0], [&](int64_t d) { return starts[d]; })) {
    ReassociationIndices lead = groups[0];
    groups.erase(groups.begin());
    groups[0].insert(groups[0].begin(), lead.begin(), lead.end());
  }
  return groups;
}

MergedTranspose ke::mergeTranspose(ArrayRef<int64_t> outputShape,
                                   ArrayRef<int64_t> permutation) {
  unsigned rank = outputShape.size();
  SmallVector<int64_t> inputShape(rank);
  for (unsigned d = 0; d < rank; ++d)
    inputShape[permutation[d]] = outputShape[d];
  // The input's dimensions of extent above 1, in input order, numbered.
  SmallVector<int64_t> moving(rank, -1);
  int64_t count = 0;
  for (unsigned d = 0; d < rank; ++d)
    if (inputShape[d] != 1)
      moving[d] = count++;
  // An output dimension (of extent above 1) opens a merged one unless it
  // follows, among those above 1, the input dimension right before its own.
  SmallVector<bool> outputStarts(rank, false), inputStarts(rank, false);
  int64_t previous = -2;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t rankInInput = moving[permutation[d]];
    if (rankInInput < 0)
      continue;
    if (rankInInput != previous + 1) {
      outputStarts[d] = true;
      inputStarts[permutation[d]] = true;
    }
    previous = rankInInput;
  }
  MergedTranspose t;
  t.outputGroups = groupsFrom(rank, outputStarts);
  t.inputGroups = groupsFrom(rank, inputStarts);
  // Each merged output dimension: its extent and the input group that
  // holds its first dimension above 1.
  for (const ReassociationIndices &group : t.outputGroups) {
    int64_t extent = 1, first = -1;
    for (int64_t d : group) {
      extent *= outputShape[d];
      if (first < 0 && outputStarts[d])
        first = permutation[d];
    }
    t.shape.push_back(extent);
    int64_t position = 0;
    for (auto [i, inputGroup] : llvm::enumerate(t.inputGroups))
      if (first >= 0 && llvm::is_contained(inputGroup, first))
        position = i;
    t.permutation.push_back(position);
  }
  return t;
}

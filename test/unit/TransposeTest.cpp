//===- TransposeTest.cpp - Transposes over their merged dimensions --------===//

#include "ke/Workload/Transpose.h"

#include <gtest/gtest.h>

using namespace ke;

namespace {

using Groups = llvm::SmallVector<mlir::ReassociationIndices>;
using Ints = llvm::SmallVector<int64_t>;

TEST(MergeTranspose, ChannelsFirstToLastMergesTheSpatialDimensions) {
  // NCHW -> NHWC: N x C x HW -> N x HW x C.
  MergedTranspose t = mergeTranspose({32, 56, 56, 256}, {0, 2, 3, 1});
  EXPECT_EQ(t.outputGroups, (Groups{{0}, {1, 2}, {3}}));
  EXPECT_EQ(t.inputGroups, (Groups{{0}, {1}, {2, 3}}));
  EXPECT_EQ(t.shape, (Ints{32, 3136, 256}));
  EXPECT_EQ(t.permutation, (Ints{0, 2, 1}));
  EXPECT_TRUE(t.movesInnermost());
  EXPECT_EQ(t.inputInnermost(), 1u);
}

TEST(MergeTranspose, ChannelsLastToFirst) {
  // NHWC -> NCHW: N x HW x C -> N x C x HW.
  MergedTranspose t = mergeTranspose({32, 64, 56, 56}, {0, 3, 1, 2});
  EXPECT_EQ(t.outputGroups, (Groups{{0}, {1}, {2, 3}}));
  EXPECT_EQ(t.inputGroups, (Groups{{0}, {1, 2}, {3}}));
  EXPECT_EQ(t.shape, (Ints{32, 64, 3136}));
  EXPECT_EQ(t.permutation, (Ints{0, 2, 1}));
  // C, innermost in the input, is the output's dimension 1.
  EXPECT_EQ(t.inputInnermost(), 1u);
}

TEST(MergeTranspose, UnitDimensionsJoinTheirNeighbours) {
  // A 1x1 filter F x C x 1 x 1 -> 1 x 1 x C x F is a 2-D transpose.
  MergedTranspose t = mergeTranspose({1, 1, 256, 64}, {2, 3, 1, 0});
  EXPECT_EQ(t.outputGroups, (Groups{{0, 1, 2}, {3}}));
  EXPECT_EQ(t.inputGroups, (Groups{{0}, {1, 2, 3}}));
  EXPECT_EQ(t.shape, (Ints{256, 64}));
  EXPECT_EQ(t.permutation, (Ints{1, 0}));
  EXPECT_TRUE(t.movesInnermost());
  EXPECT_EQ(t.inputInnermost(), 0u);
}

TEST(MergeTranspose, KeepingTheInnermostDimensionIsNoMove) {
  // out[a, b, c] = in[b, a, c]: reads and writes both run along c.
  MergedTranspose t = mergeTranspose({3, 5, 7}, {1, 0, 2});
  EXPECT_EQ(t.shape, (Ints{3, 5, 7}));
  EXPECT_EQ(t.permutation, (Ints{1, 0, 2}));
  EXPECT_FALSE(t.movesInnermost());
}

TEST(MergeTranspose, IdentityAndUnitOnlyAreCopies) {
  MergedTranspose identity = mergeTranspose({3, 5, 7}, {0, 1, 2});
  EXPECT_EQ(identity.shape, (Ints{105}));
  EXPECT_FALSE(identity.movesInnermost());
  MergedTranspose units = mergeTranspose({1, 1}, {1, 0});
  EXPECT_EQ(units.outputGroups, (Groups{{0, 1}}));
  EXPECT_EQ(units.shape, (Ints{1}));
  EXPECT_FALSE(units.movesInnermost());
  // A 2-D transpose with one unit side is a copy too.
  EXPECT_FALSE(mergeTranspose({1, 9}, {1, 0}).movesInnermost());
}

TEST(MergeTranspose, ThreeGroupsRotate) {
  // Input a x 1 x b x c (2 x 1 x 3 x 4) to c x a x 1 x b: a, the unit
  // dimension and b stay together, so this is (a 1 b) x c -> c x (a 1 b).
  MergedTranspose t = mergeTranspose({4, 2, 1, 3}, {3, 0, 1, 2});
  EXPECT_EQ(t.inputGroups, (Groups{{0, 1, 2}, {3}}));
  EXPECT_EQ(t.shape, (Ints{4, 6}));
  EXPECT_EQ(t.permutation, (Ints{1, 0}));
  EXPECT_TRUE(t.movesInnermost());
}

} // namespace

//===- ColumnReductionTest.cpp - Reductions along a non-innermost loop ----===//

#include "TestUtils.h"

#include "ke/Workload/ColumnReduction.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace ke;

namespace {

class ColumnReductionTest : public ke::testing::IRTest {
protected:
  /// The column reduction of the one linalg.generic in a function of
  /// `args` whose body yields `body` (over %a, %b, ..., and %acc).
  std::optional<ColumnReduction> analyze(llvm::StringRef maps,
                                         llvm::StringRef iterators,
                                         llvm::StringRef operands,
                                         llvm::StringRef body) {
    std::string source = ke::testing::fillTemplate(R"mlir(
      func.func @f($0) {
        linalg.generic {indexing_maps = [$1], iterator_types = [$2]} $3 {
        $4
        }
        return
      })mlir",
        {signature, maps.str(), iterators.str(), operands.str(), body.str()});
    ModuleOp module = parse(source);
    linalg::GenericOp op;
    if (module)
      module.walk([&](linalg::GenericOp g) { op = g; });
    EXPECT_TRUE(op);
    return op ? analyzeColumnReduction(op) : std::nullopt;
  }

  std::string signature;
};

constexpr llvm::StringLiteral kSum = R"mlir(^bb0(%a: f32, %acc: f32):
          %s = arith.addf %a, %acc : f32
          linalg.yield %s : f32)mlir";

TEST_F(ColumnReductionTest, BatchStatisticsAreColumns) {
  signature = "%x: memref<1024x512xf32>, %o: memref<512xf32>";
  std::optional<ColumnReduction> c =
      analyze("affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>",
              R"("reduction", "parallel")",
              "ins(%x : memref<1024x512xf32>) outs(%o : memref<512xf32>)",
              kSum);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->reductionLoop, 0u);
  EXPECT_EQ(c->batch, 1);
  EXPECT_EQ(c->rows, 1024);
  EXPECT_EQ(c->columns, 512);
  EXPECT_TRUE(isa<arith::AddFOp>(c->combiner));
}

TEST_F(ColumnReductionTest, MiddleDimensionWithKeptExtentOne) {
  // torch.sum(x, dim=1, keepdim=True) of a 4 x 64 x 8 x 16 tensor: the
  // batch before the reduction, the columns after it merged.
  signature = "%x: memref<4x64x8x16xf32>, %o: memref<4x1x8x16xf32>";
  std::optional<ColumnReduction> c = analyze(
      "affine_map<(b, r, h, w) -> (b, r, h, w)>, "
      "affine_map<(b, r, h, w) -> (b, 0, h, w)>",
      R"("parallel", "reduction", "parallel", "parallel")",
      "ins(%x : memref<4x64x8x16xf32>) outs(%o : memref<4x1x8x16xf32>)", kSum);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->reductionLoop, 1u);
  EXPECT_EQ(c->batch, 4);
  EXPECT_EQ(c->rows, 64);
  EXPECT_EQ(c->columns, 128);
}

TEST_F(ColumnReductionTest, RowReductionsAreNot) {
  signature = "%x: memref<8x64xf32>, %o: memref<8xf32>";
  EXPECT_FALSE(
      analyze("affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>",
              R"("parallel", "reduction")",
              "ins(%x : memref<8x64xf32>) outs(%o : memref<8xf32>)", kSum));
}

TEST_F(ColumnReductionTest, BodiesThatScaleTheAccumulatorAreNot) {
  // (acc + x) * 2: each thread's partial would be scaled again when the
  // partials are combined.
  signature = "%x: memref<64x8xf32>, %o: memref<8xf32>";
  EXPECT_FALSE(analyze(
      "affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>",
      R"("reduction", "parallel")",
      "ins(%x : memref<64x8xf32>) outs(%o : memref<8xf32>)",
      R"mlir(^bb0(%a: f32, %acc: f32):
          %two = arith.constant 2.0 : f32
          %s = arith.addf %a, %acc : f32
          %t = arith.mulf %s, %two : f32
          linalg.yield %t : f32)mlir"));
}

TEST_F(ColumnReductionTest, NonPermutationReadsAreNot) {
  // A strided read (every second column) is no projected permutation.
  signature = "%x: memref<64x16xf32>, %o: memref<8xf32>";
  EXPECT_FALSE(analyze(
      "affine_map<(d0, d1) -> (d0, d1 * 2)>, affine_map<(d0, d1) -> (d1)>",
      R"("reduction", "parallel")",
      "ins(%x : memref<64x16xf32>) outs(%o : memref<8xf32>)", kSum));
}

} // namespace

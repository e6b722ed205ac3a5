//===- WorkloadKeyTest.cpp - Stability and sensitivity of workload keys ---===//

#include "TestUtils.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace ke;
using ke::testing::IRTest;

namespace {

using WorkloadKeyTest = IRTest;

/// A matmul with every shape, type and name a parameter.
std::string matmul(llvm::StringRef fn, llvm::StringRef a, int m, int n, int k,
                   llvm::StringRef type = "f32") {
  return ke::testing::fillTemplate(R"mlir(
func.func @$0(%$1: tensor<$2x$4x$5>, %b: tensor<$4x$3x$5>,
               %c: tensor<$2x$3x$5>) -> tensor<$2x$3x$5> {
  %r = linalg.matmul ins(%$1, %b : tensor<$2x$4x$5>, tensor<$4x$3x$5>)
                     outs(%c : tensor<$2x$3x$5>) -> tensor<$2x$3x$5>
  return %r : tensor<$2x$3x$5>
})mlir",
                       {fn.str(), a.str(), std::to_string(m), std::to_string(n), std::to_string(k), type.str()});
}

/// An elementwise generic over 16x8 whose body is `body` applied to the
/// block arguments %x and %y, with the given iterator types and output map.
std::string generic(llvm::StringRef body, llvm::StringRef iterators =
                                              "\"parallel\", \"parallel\"",
                    llvm::StringRef outMap = "(d0, d1) -> (d0, d1)",
                    llvm::StringRef outType = "tensor<16x8xf32>") {
  return ke::testing::fillTemplate(R"mlir(
func.func @g(%in: tensor<16x8xf32>, %out: $3) -> $3 {
  %r = linalg.generic {
      indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<$2>],
      iterator_types = [$1]}
      ins(%in : tensor<16x8xf32>) outs(%out : $3) {
    ^bb0(%x: f32, %y: f32):
      $0
  } -> $3
  return %r : $3
})mlir",
                       {body.str(), iterators.str(), outMap.str(), outType.str()});
}

TEST_F(WorkloadKeyTest, KeyIs32HexDigits) {
  std::string key = keyOf(matmul("f", "a", 8, 16, 4));
  EXPECT_EQ(key.size(), 32u);
  EXPECT_TRUE(llvm::all_of(key, llvm::isHexDigit));
}

TEST_F(WorkloadKeyTest, StableUnderRenamingValuesAndFunctions) {
  EXPECT_EQ(keyOf(matmul("f", "a", 8, 16, 4)),
            keyOf(matmul("other_function", "lhs_value", 8, 16, 4)));
}

TEST_F(WorkloadKeyTest, StableUnderLocations) {
  std::string plain = matmul("f", "a", 8, 16, 4);
  std::string located = plain;
  // Attach a location to the matmul line.
  size_t at = located.find("-> tensor<8x16xf32>\n  return");
  ASSERT_NE(at, std::string::npos);
  located.insert(at + strlen("-> tensor<8x16xf32>"),
                 " loc(\"model.py\":42:7)");
  EXPECT_EQ(keyOf(plain), keyOf(located));
}

TEST_F(WorkloadKeyTest, StableUnderOpOrderAndMergedByKey) {
  std::vector<Workload> ab = workloadsOf(matmul("f", "a", 8, 16, 4) +
                                         matmul("g", "a", 4, 4, 4) +
                                         matmul("h", "x", 8, 16, 4));
  std::vector<Workload> ba = workloadsOf(matmul("g", "a", 4, 4, 4) +
                                         matmul("f", "z", 8, 16, 4));
  ASSERT_EQ(ab.size(), 2u);
  ASSERT_EQ(ba.size(), 2u);
  EXPECT_EQ(ab[0].key, ba[1].key);
  EXPECT_EQ(ab[1].key, ba[0].key);
  EXPECT_EQ(ab[0].count(), 2u); // 8x16x4 occurs twice
  EXPECT_EQ(ab[1].count(), 1u);
}

TEST_F(WorkloadKeyTest, StableUnderDiscardableAttributes) {
  std::string tagged = matmul("f", "a", 8, 16, 4);
  size_t ins = tagged.find("linalg.matmul") + strlen("linalg.matmul");
  std::string withAttr = tagged;
  withAttr.insert(ins, " {ke.note = \"hot\"}");
  EXPECT_EQ(keyOf(tagged), keyOf(withAttr));
}

TEST_F(WorkloadKeyTest, ChangesWithEveryDimension) {
  std::string base = keyOf(matmul("f", "a", 8, 16, 4));
  EXPECT_NE(base, keyOf(matmul("f", "a", 9, 16, 4)));
  EXPECT_NE(base, keyOf(matmul("f", "a", 8, 17, 4)));
  EXPECT_NE(base, keyOf(matmul("f", "a", 8, 16, 5)));
}

TEST_F(WorkloadKeyTest, ChangesWithElementType) {
  std::string f32 = keyOf(matmul("f", "a", 8, 16, 4, "f32"));
  std::string f16 = keyOf(matmul("f", "a", 8, 16, 4, "f16"));
  std::string bf16 = keyOf(matmul("f", "a", 8, 16, 4, "bf16"));
  EXPECT_NE(f32, f16);
  EXPECT_NE(f16, bf16);
  EXPECT_NE(f32, bf16);
}

TEST_F(WorkloadKeyTest, ChangesWithTensorVersusMemref) {
  std::string onMemrefs = R"mlir(
func.func @f(%a: memref<8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>)
                outs(%c : memref<8x16xf32>)
  return
})mlir";
  EXPECT_NE(keyOf(matmul("f", "a", 8, 16, 4)), keyOf(onMemrefs));
}

TEST_F(WorkloadKeyTest, ChangesWithIndexingMap) {
  std::string plain = generic("%s = arith.addf %x, %y : f32\n      "
                              "linalg.yield %s : f32");
  std::string transposed = generic("%s = arith.addf %x, %y : f32\n      "
                                   "linalg.yield %s : f32",
                                   "\"parallel\", \"parallel\"",
                                   "(d0, d1) -> (d1, d0)", "tensor<8x16xf32>");
  EXPECT_NE(keyOf(plain), keyOf(transposed));

  // Same shapes, different map: a named transposed matmul.
  std::string transposedB = R"mlir(
func.func @f(%a: tensor<8x4xf32>, %b: tensor<16x4xf32>, %c: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
       ins(%a, %b : tensor<8x4xf32>, tensor<16x4xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
})mlir";
  std::string squareB = R"mlir(
func.func @f(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %c: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
})mlir";
  EXPECT_NE(keyOf(transposedB), keyOf(squareB));
}

TEST_F(WorkloadKeyTest, ChangesWithIteratorType) {
  std::string sumRows = generic("%s = arith.addf %x, %y : f32\n      "
                                "linalg.yield %s : f32",
                                "\"parallel\", \"reduction\"",
                                "(d0, d1) -> (d0)", "tensor<16xf32>");
  std::string fakeParallel = generic("%s = arith.addf %x, %y : f32\n      "
                                     "linalg.yield %s : f32",
                                     "\"parallel\", \"parallel\"",
                                     "(d0, d1) -> (d0)", "tensor<16xf32>");
  // A parallel loop writing (d0) is legal (if racy) IR; only the iterator
  // types differ, and so must the keys.
  EXPECT_NE(keyOf(sumRows), keyOf(fakeParallel));
}

TEST_F(WorkloadKeyTest, ChangesWithBody) {
  std::string add = keyOf(generic("%s = arith.addf %x, %y : f32\n      "
                                  "linalg.yield %s : f32"));
  std::string mul = keyOf(generic("%s = arith.mulf %x, %y : f32\n      "
                                  "linalg.yield %s : f32"));
  std::string swapped = keyOf(generic("%s = arith.subf %y, %x : f32\n      "
                                      "linalg.yield %s : f32"));
  std::string sub = keyOf(generic("%s = arith.subf %x, %y : f32\n      "
                                  "linalg.yield %s : f32"));
  EXPECT_NE(add, mul);
  EXPECT_NE(sub, swapped); // operand order inside the body matters
  std::string fast = keyOf(generic("%s = arith.addf %x, %y fastmath<fast> : "
                                   "f32\n      linalg.yield %s : f32"));
  EXPECT_NE(add, fast); // so do attributes of body ops
}

TEST_F(WorkloadKeyTest, ConstantsCapturedByTheBodyAreDescribedByValue) {
  auto withConstant = [](llvm::StringRef value) {
    return ke::testing::fillTemplate(R"mlir(
func.func @g(%in: tensor<16xf32>, %out: tensor<16xf32>) -> tensor<16xf32> {
  %k = arith.constant $0 : f32
  %r = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%in : tensor<16xf32>) outs(%out : tensor<16xf32>) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.maximumf %x, %k : f32
      linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
})mlir",
                       {value.str()});
  };
  EXPECT_EQ(keyOf(withConstant("0.0")), keyOf(withConstant("0.0")));
  EXPECT_NE(keyOf(withConstant("0.0")), keyOf(withConstant("6.0")));
}

TEST_F(WorkloadKeyTest, ChangesWithConvolutionStrides) {
  auto conv = [](int stride) {
    int out = stride == 1 ? 8 : 4;
    return ke::testing::fillTemplate(R"mlir(
func.func @c(%i: tensor<1x10x10x3xf32>, %f: tensor<3x3x3x8xf32>, %o: tensor<1x$1x$1x8xf32>) -> tensor<1x$1x$1x8xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<$0> : tensor<2xi64>}
       ins(%i, %f : tensor<1x10x10x3xf32>, tensor<3x3x3x8xf32>) outs(%o : tensor<1x$1x$1x8xf32>) -> tensor<1x$1x$1x8xf32>
  return %r : tensor<1x$1x$1x8xf32>
})mlir",
                       {std::to_string(stride), std::to_string(out)});
  };
  EXPECT_NE(keyOf(conv(1)), keyOf(conv(2)));
}

TEST_F(WorkloadKeyTest, SignatureHasNoNames) {
  Workload w = onlyWorkload(matmul("secret_function", "secret_value", 8, 16, 4));
  std::string signature = getCanonicalSignature(w.firstOp);
  EXPECT_EQ(signature.find("secret"), std::string::npos) << signature;
}

} // namespace

//===- CostTest.cpp - Kinds, flops, bytes and fusion of each op kind ------===//

#include "TestUtils.h"

using namespace ke;
using ke::testing::IRTest;

namespace {

using CostTest = IRTest;

/// Wraps `body` in a function whose arguments are `args`.
std::string fn(llvm::StringRef args, llvm::StringRef body) {
  return ("func.func @f(" + args + ") {\n" + body + "\n  return\n}").str();
}

TEST_F(CostTest, Matmul) {
  Workload w = onlyWorkload(fn(
      "%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %c: tensor<8x16xf32>",
      "%r = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) "
      "outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>"));
  EXPECT_EQ(w.kind, WorkloadKind::Contraction);
  EXPECT_EQ(w.flops, 2u * 8 * 16 * 4);
  // A and B read; C read (accumulator) and written.
  EXPECT_EQ(w.bytesRead, 4u * (8 * 4 + 4 * 16 + 8 * 16));
  EXPECT_EQ(w.bytesWritten, 4u * 8 * 16);
  ASSERT_EQ(w.operands.size(), 3u);
  EXPECT_TRUE(w.operands[2].isInit);
  EXPECT_EQ(w.operands[0].shape, (llvm::SmallVector<int64_t>{8, 4}));
  EXPECT_EQ(w.operands[0].elementType, "f32");
  EXPECT_EQ(w.operands[0].container, "tensor");
}

TEST_F(CostTest, MixedPrecisionMatmulCountsNoCasts) {
  Workload w = onlyWorkload(fn(
      "%a: tensor<8x4xbf16>, %b: tensor<4x16xbf16>, %c: tensor<8x16xf32>",
      "%r = linalg.matmul ins(%a, %b : tensor<8x4xbf16>, tensor<4x16xbf16>) "
      "outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>"));
  EXPECT_EQ(w.flops, 2u * 8 * 16 * 4);
  EXPECT_EQ(w.bytesRead, 2u * (8 * 4 + 4 * 16) + 4u * 8 * 16);
}

TEST_F(CostTest, BatchMatmulAndMatvec) {
  Workload bmm = onlyWorkload(fn(
      "%a: memref<3x8x4xf16>, %b: memref<3x4x16xf16>, %c: memref<3x8x16xf16>",
      "linalg.batch_matmul ins(%a, %b : memref<3x8x4xf16>, memref<3x4x16xf16>) "
      "outs(%c : memref<3x8x16xf16>)"));
  EXPECT_EQ(bmm.kind, WorkloadKind::Contraction);
  EXPECT_EQ(bmm.flops, 2u * 3 * 8 * 16 * 4);
  EXPECT_EQ(bmm.bytesWritten, 2u * 3 * 8 * 16);
  EXPECT_EQ(bmm.operands[0].container, "memref");

  Workload mv = onlyWorkload(fn(
      "%a: tensor<32x64xf32>, %x: tensor<64xf32>, %y: tensor<32xf32>",
      "%r = linalg.matvec ins(%a, %x : tensor<32x64xf32>, tensor<64xf32>) "
      "outs(%y : tensor<32xf32>) -> tensor<32xf32>"));
  EXPECT_EQ(mv.kind, WorkloadKind::Contraction);
  EXPECT_EQ(mv.flops, 2u * 32 * 64);
  EXPECT_EQ(mv.bytesRead, 4u * (32 * 64 + 64 + 32));
}

TEST_F(CostTest, Conv2dNhwc) {
  Workload w = onlyWorkload(fn(
      "%i: tensor<1x10x10x3xf32>, %f: tensor<3x3x3x8xf32>, "
      "%o: tensor<1x8x8x8xf32>",
      "%r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, "
      "strides = dense<1> : tensor<2xi64>} ins(%i, %f : tensor<1x10x10x3xf32>, "
      "tensor<3x3x3x8xf32>) outs(%o : tensor<1x8x8x8xf32>) -> "
      "tensor<1x8x8x8xf32>"));
  EXPECT_EQ(w.kind, WorkloadKind::Convolution);
  // n, oh, ow, f, kh, kw, c
  EXPECT_EQ(w.flops, 2u * 1 * 8 * 8 * 8 * 3 * 3 * 3);
  EXPECT_EQ(w.bytesRead, 4u * (300 + 216 + 512));
  EXPECT_EQ(w.bytesWritten, 4u * 512);
}

TEST_F(CostTest, StridedConvAndDepthwise) {
  Workload strided = onlyWorkload(fn(
      "%i: tensor<1x3x9x9xf32>, %f: tensor<8x3x3x3xf32>, "
      "%o: tensor<1x8x4x4xf32>",
      "%r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, "
      "strides = dense<2> : tensor<2xi64>} ins(%i, %f : tensor<1x3x9x9xf32>, "
      "tensor<8x3x3x3xf32>) outs(%o : tensor<1x8x4x4xf32>) -> "
      "tensor<1x8x4x4xf32>"));
  EXPECT_EQ(strided.kind, WorkloadKind::Convolution);
  EXPECT_EQ(strided.flops, 2u * 8 * 4 * 4 * 3 * 3 * 3);

  Workload depthwise = onlyWorkload(fn(
      "%i: tensor<1x10x10x4xf32>, %f: tensor<3x3x4xf32>, "
      "%o: tensor<1x8x8x4xf32>",
      "%r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : "
      "tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %f : "
      "tensor<1x10x10x4xf32>, tensor<3x3x4xf32>) outs(%o : "
      "tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>"));
  EXPECT_EQ(depthwise.kind, WorkloadKind::Convolution);
  EXPECT_EQ(depthwise.flops, 2u * 8 * 8 * 4 * 3 * 3);
}

TEST_F(CostTest, PoolingReadsNoWindow) {
  Workload w = onlyWorkload(fn(
      "%i: tensor<1x8x8x4xf32>, %k: tensor<2x2xf32>, %o: tensor<1x4x4x4xf32>",
      "%r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, "
      "strides = dense<2> : tensor<2xi64>} ins(%i, %k : tensor<1x8x8x4xf32>, "
      "tensor<2x2xf32>) outs(%o : tensor<1x4x4x4xf32>) -> "
      "tensor<1x4x4x4xf32>"));
  EXPECT_EQ(w.kind, WorkloadKind::Pooling);
  EXPECT_EQ(w.flops, 1u * 4 * 4 * 4 * 2 * 2);
  // The window tensor only gives a shape; the running max is read.
  EXPECT_EQ(w.bytesRead, 4u * (256 + 64));
  EXPECT_EQ(w.bytesWritten, 4u * 64);
}

TEST_F(CostTest, ReduceSum) {
  Workload w = onlyWorkload(fn(
      "%i: tensor<16x32xf32>, %o: tensor<16xf32>",
      "%r = linalg.reduce ins(%i : tensor<16x32xf32>) outs(%o : "
      "tensor<16xf32>) dimensions = [1] (%x: f32, %acc: f32) {\n"
      "  %s = arith.addf %x, %acc : f32\n  linalg.yield %s : f32\n}"));
  EXPECT_EQ(w.kind, WorkloadKind::Reduction);
  EXPECT_EQ(w.flops, 16u * 32);
  EXPECT_EQ(w.bytesRead, 4u * (16 * 32 + 16));
  EXPECT_EQ(w.bytesWritten, 4u * 16);
}

TEST_F(CostTest, SoftmaxCountsFivePerElement) {
  Workload w = onlyWorkload(fn(
      "%i: tensor<4x128xf32>, %o: tensor<4x128xf32>",
      "%r = linalg.softmax dimension(1) ins(%i : tensor<4x128xf32>) outs(%o : "
      "tensor<4x128xf32>) -> tensor<4x128xf32>"));
  EXPECT_EQ(w.kind, WorkloadKind::Softmax);
  EXPECT_EQ(w.flops, 5u * 4 * 128);
  EXPECT_EQ(w.bytesRead, 4u * 512);
  EXPECT_EQ(w.bytesWritten, 4u * 512);
}

TEST_F(CostTest, ElementwiseChainCountsEveryOp) {
  // sigmoid(x) = 1 / (1 + exp(-x)): negf, exp, addf, divf.
  Workload w = onlyWorkload(fn(
      "%i: tensor<64xbf16>, %o: tensor<64xbf16>",
      "%one = arith.constant 1.0 : bf16\n"
      "%r = linalg.generic {indexing_maps = [affine_map<(d) -> (d)>, "
      "affine_map<(d) -> (d)>], iterator_types = [\"parallel\"]} ins(%i : "
      "tensor<64xbf16>) outs(%o : tensor<64xbf16>) {\n"
      "^bb0(%x: bf16, %y: bf16):\n"
      "  %n = arith.negf %x : bf16\n  %e = math.exp %n : bf16\n"
      "  %d = arith.addf %e, %one : bf16\n  %s = arith.divf %one, %d : bf16\n"
      "  linalg.yield %s : bf16\n} -> tensor<64xbf16>"));
  EXPECT_EQ(w.kind, WorkloadKind::Elementwise);
  EXPECT_EQ(w.flops, 4u * 64);
  EXPECT_EQ(w.bytesRead, 2u * 64); // the init is never read
  EXPECT_EQ(w.bytesWritten, 2u * 64);
}

TEST_F(CostTest, FillAndDataMovement) {
  std::vector<Workload> ws = workloadsOf(fn(
      "%e: tensor<8x4xf32>, %t: tensor<4x8xf32>",
      "%z = arith.constant 0.0 : f32\n"
      "%f = linalg.fill ins(%z : f32) outs(%e : tensor<8x4xf32>) -> "
      "tensor<8x4xf32>\n"
      "%r = linalg.transpose ins(%f : tensor<8x4xf32>) outs(%t : "
      "tensor<4x8xf32>) permutation = [1, 0]"));
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_EQ(ws[0].kind, WorkloadKind::Fill);
  EXPECT_EQ(ws[0].flops, 0u);
  EXPECT_EQ(ws[0].bytesRead, 4u); // the scalar
  EXPECT_EQ(ws[0].bytesWritten, 4u * 32);
  EXPECT_EQ(ws[1].kind, WorkloadKind::DataMovement);
  EXPECT_EQ(ws[1].flops, 0u);
  EXPECT_EQ(ws[1].bytesRead, 4u * 32);
}

TEST_F(CostTest, DynamicShapesHaveNoCounts) {
  Workload w = onlyWorkload(fn(
      "%a: tensor<?x4xf32>, %b: tensor<4x16xf32>, %c: tensor<?x16xf32>",
      "%r = linalg.matmul ins(%a, %b : tensor<?x4xf32>, tensor<4x16xf32>) "
      "outs(%c : tensor<?x16xf32>) -> tensor<?x16xf32>"));
  EXPECT_FALSE(w.flops.has_value());
  EXPECT_FALSE(w.bytesRead.has_value());
  EXPECT_TRUE(mlir::ShapedType::isDynamic(w.operands[0].shape[0]));
}

TEST_F(CostTest, FusableProducersAndConsumersOnTensors) {
  std::vector<Workload> ws = workloadsOf(fn(
      "%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %e: tensor<8x16xf32>",
      "%z = arith.constant 0.0 : f32\n"
      "%c = linalg.fill ins(%z : f32) outs(%e : tensor<8x16xf32>) -> "
      "tensor<8x16xf32>\n"
      "%m = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) "
      "outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>\n"
      "%r = linalg.exp ins(%m : tensor<8x16xf32>) outs(%e : "
      "tensor<8x16xf32>) -> tensor<8x16xf32>"));
  ASSERT_EQ(ws.size(), 3u);
  const Workload &mm = ws[1];
  ASSERT_EQ(mm.opName, "linalg.matmul");
  ASSERT_EQ(mm.fusible.size(), 2u);
  EXPECT_TRUE(mm.fusible[0].isProducer);
  EXPECT_EQ(mm.fusible[0].opName, "linalg.fill");
  EXPECT_EQ(mm.fusible[0].anchorOperandOrResult, 2u);
  EXPECT_EQ(mm.fusible[0].key, ws[0].key);
  EXPECT_FALSE(mm.fusible[1].isProducer);
  EXPECT_EQ(mm.fusible[1].opName, "linalg.exp");
  EXPECT_EQ(mm.fusible[1].key, ws[2].key);
  // The exp's producer is the matmul, which is not elementwise.
  EXPECT_TRUE(ws[2].fusible.empty());
}

TEST_F(CostTest, FusableNeighboursOnMemrefs) {
  std::vector<Workload> ws = workloadsOf(fn(
      "%a: memref<8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x16xf32>, "
      "%o: memref<8x16xf32>",
      "%z = arith.constant 0.0 : f32\n"
      "linalg.fill ins(%z : f32) outs(%c : memref<8x16xf32>)\n"
      "linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) "
      "outs(%c : memref<8x16xf32>)\n"
      "linalg.exp ins(%c : memref<8x16xf32>) outs(%o : memref<8x16xf32>)"));
  ASSERT_EQ(ws.size(), 3u);
  const Workload &mm = ws[1];
  ASSERT_EQ(mm.fusible.size(), 2u);
  EXPECT_EQ(mm.fusible[0].opName, "linalg.fill");
  EXPECT_EQ(mm.fusible[1].opName, "linalg.exp");
}

TEST_F(CostTest, OverflowGivesNoCount) {
  Workload w = onlyWorkload(fn(
      "%a: tensor<4294967296x4294967296xf32>, %b: tensor<4294967296x2xf32>, "
      "%c: tensor<4294967296x2xf32>",
      "%r = linalg.matmul ins(%a, %b : tensor<4294967296x4294967296xf32>, "
      "tensor<4294967296x2xf32>) outs(%c : tensor<4294967296x2xf32>) -> "
      "tensor<4294967296x2xf32>"));
  EXPECT_FALSE(w.flops.has_value());
  EXPECT_FALSE(w.bytesRead.has_value());
}

} // namespace

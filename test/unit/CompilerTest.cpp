//===- CompilerTest.cpp - compileModule, as hosts other than ke-opt use it ===//

#include "TestUtils.h"

#include "ke/Compiler/Compiler.h"

#include "mlir/IR/Diagnostics.h"

using namespace ke;
using ke::testing::IRTest;

namespace {

constexpr llvm::StringLiteral kMatmulRelu = R"mlir(
func.func @f(%a: tensor<32x16xf32>, %b: tensor<16x24xf32>) -> tensor<32x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x24xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<32x24xf32>) -> tensor<32x24xf32>
  %m = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x24xf32>) outs(%c : tensor<32x24xf32>) -> tensor<32x24xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<32x24xf32>) outs(%e : tensor<32x24xf32>) {
    ^bb0(%x: f32, %o: f32):
      %t = arith.maximumf %x, %zero : f32
      linalg.yield %t : f32
  } -> tensor<32x24xf32>
  return %r : tensor<32x24xf32>
})mlir";

class CompilerTest : public IRTest {
protected:
  /// Collects diagnostics as text instead of printing them.
  CompilerTest()
      : handler(&context, [this](mlir::Diagnostic &diag) {
          diagnostics += diag.str() + "\n";
          return mlir::success();
        }) {}
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler;
};

TEST_F(CompilerTest, CpuModulesBecomeOneObjectFile) {
  mlir::ModuleOp module = parse(kMatmulRelu);
  CompileOptions options;
  options.openmp = false;
  mlir::FailureOr<CompiledModule> compiled =
      compileModule(module, detectHostTarget(), options);
  ASSERT_TRUE(mlir::succeeded(compiled)) << diagnostics;
  ASSERT_GE(compiled->cpuCode.size(), 4u);
  EXPECT_EQ(compiled->cpuCode.substr(0, 4), "\x7f"
                                            "ELF");
  EXPECT_TRUE(compiled->gpuKernels.empty());
  // Every workload's schedule is remarked.
  EXPECT_NE(diagnostics.find("applied the default schedule"),
            std::string::npos);
}

TEST_F(CompilerTest, GpuModulesBecomeOneKernelPerGroup) {
  mlir::ModuleOp module = parse(kMatmulRelu);
  llvm::Expected<TargetDescription> cuda = parseTarget("cuda:sm_90");
  ASSERT_TRUE(bool(cuda));
  CompileOptions options;
  options.stage = CompileStage::Scheduled;
  mlir::FailureOr<CompiledModule> compiled =
      compileModule(module, *cuda, options);
  ASSERT_TRUE(mlir::succeeded(compiled)) << diagnostics;
  // The fill and the relu are fused into the matmul's kernel.
  ASSERT_EQ(compiled->gpuKernels.size(), 1u);
  const CompiledGpuKernel &kernel = compiled->gpuKernels.front();
  EXPECT_EQ(kernel.opName, "linalg.matmul");
  EXPECT_EQ(kernel.ruleName, "gpu.tile");
  EXPECT_NE(kernel.mlir.find("gpu"), std::string::npos);
  EXPECT_TRUE(compiled->cpuCode.empty());
}

TEST_F(CompilerTest, ErrorsAreDiagnostics) {
  llvm::Expected<TargetDescription> cuda = parseTarget("cuda:sm_90");
  ASSERT_TRUE(bool(cuda));
  CompileOptions reference;
  reference.reference = true;
  EXPECT_TRUE(
      mlir::failed(compileModule(parse(kMatmulRelu), *cuda, reference)));
  EXPECT_NE(diagnostics.find("cpu targets only"), std::string::npos);

  diagnostics.clear();
  CompileOptions missing;
  missing.databasePath = "/nonexistent/ke-tuning.db";
  EXPECT_TRUE(mlir::failed(compileModule(parse(kMatmulRelu), *cuda, missing)));
  EXPECT_NE(diagnostics.find("does not exist"), std::string::npos);

  diagnostics.clear();
  EXPECT_TRUE(mlir::failed(compileModule(parse("func.func @f() { return }"),
                                         *cuda, CompileOptions())));
  EXPECT_NE(diagnostics.find("no workload to compile"), std::string::npos);
}

} // namespace

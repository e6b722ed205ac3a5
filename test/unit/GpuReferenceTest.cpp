//===- GpuReferenceTest.cpp - The device reference's lowering ------------===//
//
// The device reference (ke/Codegen/GpuReference.h) lowers every kind of
// kernel a GPU tuning run meets to launches of one thread per output point:
// no shared memory, one launch per linalg op, intermediates in scratch
// buffers. Running it needs a device (docs/measurement.md has the figures
// measured on one); these tests check the lowering and the choice of place.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "ke/Codegen/CpuPipeline.h"
#include "ke/Codegen/GpuReference.h"
#include "ke/Measure/GpuEvaluator.h"
#include "ke/TunedSchedules/TunedSchedules.h"
#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace ke;
using namespace ke::testing;

namespace {

class GpuReferenceTest : public IRTest {
protected:
  /// The kernel module of the workload of `source` whose op is `opName`
  /// (the only one when empty), grouped with `target`'s kernel fusion.
  FailureOr<KernelModule> kernelOf(llvm::StringRef source,
                                   const TargetDescription &target,
                                   llvm::StringRef opName = "") {
    Workload w;
    if (opName.empty()) {
      w = onlyWorkload(source);
    } else {
      for (Workload &candidate : workloadsOf(source))
        if (candidate.opName == opName)
          w = candidate;
    }
    if (!w.firstOp)
      return failure();
    return buildKernelModule(w.firstOp, getKernelFusion(target));
  }

  /// The device reference of that kernel for `targetName`.
  FailureOr<GpuKernelBinary> lower(llvm::StringRef source,
                                   llvm::StringRef targetName = "cuda:sm_90",
                                   llvm::StringRef opName = "") {
    TargetDescription target = llvm::cantFail(parseTarget(targetName));
    FailureOr<KernelModule> kernel = kernelOf(source, target, opName);
    if (failed(kernel))
      return failure();
    return lowerReferenceKernelToGpuBinary(kernel->module.get(), target);
  }

  /// The kernel module of the only workload in `source` (CUDA's fusion),
  /// with the reference script applied and mapped to launches (steps 1-4 of
  /// GpuReference.h): the device lowering after it needs libdevice for
  /// math functions, which a machine without CUDA does not have.
  OwningOpRef<ModuleOp> mapToLaunches(llvm::StringRef source) {
    TargetDescription target = llvm::cantFail(parseTarget("cuda:sm_90"));
    FailureOr<KernelModule> kernel = kernelOf(source, target);
    if (failed(kernel))
      return nullptr;
    OwningOpRef<ModuleOp> script =
        parseSourceString<ModuleOp>(getReferenceScript(), &context);
    if (!script || failed(applySchedule(kernel->module.get(), *script)) ||
        failed(runPipeline(kernel->module.get(),
                           getGpuReferenceMappingPasses())))
      return nullptr;
    return std::move(kernel->module);
  }

  /// Threads launched by `launch`.
  static uint64_t threadsOf(const GpuLaunch &launch) {
    uint64_t threads = 1;
    for (unsigned d = 0; d < 3; ++d)
      threads *= uint64_t(launch.grid[d]) * launch.block[d];
    return threads;
  }
};

TEST_F(GpuReferenceTest, MatmulIsOneLaunchOfAThreadPerOutput) {
  FailureOr<GpuKernelBinary> binary = lower(R"mlir(
func.func @f(%a: tensor<24x20xf32>, %b: tensor<20x36xf32>, %c: tensor<24x36xf32>) -> tensor<24x36xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<24x20xf32>, tensor<20x36xf32>) outs(%c : tensor<24x36xf32>) -> tensor<24x36xf32>
  return %r : tensor<24x36xf32>
})mlir");
  ASSERT_TRUE(succeeded(binary));
  ASSERT_EQ(binary->launches.size(), 1u);
  const GpuLaunch &launch = binary->launches.front();
  EXPECT_EQ(launch.block[0], 256u);
  EXPECT_EQ(launch.grid[0], 4u); // 864 outputs in blocks of 256
  EXPECT_GE(threadsOf(launch), 24u * 36u);
  EXPECT_EQ(launch.dynamicSharedMemoryBytes, 0u);
  EXPECT_TRUE(binary->scratch.empty());
}

TEST_F(GpuReferenceTest, GroupRunsEachOpInOrder) {
  // The matmul's group holds the fill of its init: two launches, each over
  // the 16x64 outputs.
  FailureOr<GpuKernelBinary> binary = lower(R"mlir(
func.func @f(%a: tensor<16x32xf32>, %b: tensor<32x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %m : tensor<16x64xf32>
})mlir",
                                            "cuda:sm_90", "linalg.matmul");
  ASSERT_TRUE(succeeded(binary));
  ASSERT_EQ(binary->launches.size(), 2u);
  for (const GpuLaunch &launch : binary->launches)
    EXPECT_GE(threadsOf(launch), 16u * 64u);
}

TEST_F(GpuReferenceTest, SoftmaxIsDecomposedFirst) {
  OwningOpRef<ModuleOp> mapped = mapToLaunches(R"mlir(
func.func @f(%x: tensor<8x128xf32>, %o: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %r = linalg.softmax dimension(1) ins(%x : tensor<8x128xf32>) outs(%o : tensor<8x128xf32>) -> tensor<8x128xf32>
  return %r : tensor<8x128xf32>
})mlir");
  ASSERT_TRUE(mapped);
  // max, sub+exp, sum, div (and the fills of the max and the sum): each its
  // own launch over its own points, nothing left on the host but the
  // buffer that passes the row maxima and sums between them (one: the sums
  // reuse the maxima's once these are read), a scratch buffer once lowered.
  unsigned launches = 0, allocs = 0, linalgOps = 0;
  mapped->walk([&](Operation *op) {
    launches += isa<gpu::LaunchOp>(op);
    allocs += isa<memref::AllocOp>(op);
    linalgOps += isa<linalg::LinalgOp>(op) || isa<linalg::SoftmaxOp>(op);
  });
  EXPECT_GE(launches, 4u);
  EXPECT_GE(allocs, 1u);
  EXPECT_EQ(linalgOps, 0u);
}

TEST_F(GpuReferenceTest, ConvolutionsAndPoolingLower) {
  EXPECT_TRUE(succeeded(lower(R"mlir(
func.func @f(%x: tensor<2x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, %o: tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<2x8x10x10xf32>, tensor<16x8x3x3xf32>) outs(%o : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  return %r : tensor<2x16x8x8xf32>
})mlir")));
  EXPECT_TRUE(succeeded(lower(R"mlir(
func.func @f(%x: tensor<2x8x10x10xf16>, %k: tensor<2x2xf16>, %o: tensor<2x8x5x5xf16>) -> tensor<2x8x5x5xf16> {
  %r = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %k : tensor<2x8x10x10xf16>, tensor<2x2xf16>) outs(%o : tensor<2x8x5x5xf16>) -> tensor<2x8x5x5xf16>
  return %r : tensor<2x8x5x5xf16>
})mlir")));
}

TEST_F(GpuReferenceTest, RocmTargetsLowerToo) {
  FailureOr<GpuKernelBinary> binary = lower(R"mlir(
func.func @f(%x: tensor<64x256xf32>, %o: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.reduce ins(%x : tensor<64x256xf32>) outs(%o : tensor<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<64xf32>
})mlir",
                                            "rocm:gfx942");
  ASSERT_TRUE(succeeded(binary));
  EXPECT_EQ(binary->format, "hsaco");
  ASSERT_EQ(binary->launches.size(), 1u);
  EXPECT_EQ(binary->launches.front().block[0], 64u); // one thread per row
}

TEST_F(GpuReferenceTest, AutoPicksTheDeviceForBigWorkloadsOnly) {
  Workload small = onlyWorkload(R"mlir(
func.func @f(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
})mlir");
  Workload big = onlyWorkload(R"mlir(
func.func @f(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>, %c: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4096x4096xf32>, tensor<4096x4096xf32>) outs(%c : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %r : tensor<4096x4096xf32>
})mlir");
  // 1.3 GiB of f32 elementwise data, few flops.
  Workload wide = onlyWorkload(R"mlir(
func.func @f(%x: tensor<16384x20480xf32>, %o: tensor<16384x20480xf32>) -> tensor<16384x20480xf32> {
  %r = linalg.exp ins(%x : tensor<16384x20480xf32>) outs(%o : tensor<16384x20480xf32>) -> tensor<16384x20480xf32>
  return %r : tensor<16384x20480xf32>
})mlir");
  for (auto [workload, expected] :
       {std::pair{&small, false}, {&big, true}, {&wide, true}}) {
    FailureOr<KernelModule> kernel = buildKernelModule(workload->firstOp);
    ASSERT_TRUE(succeeded(kernel));
    EXPECT_EQ(isBigReference(workload->firstOp, kernel->arguments), expected)
        << workload->key;
  }
}

TEST_F(GpuReferenceTest, UnmappableOpsAreDiagnosed) {
  // A kernel whose op has no generic form cannot be mapped: the lowering
  // fails with a diagnostic, the caller falls back or reports it.
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message += diag.str();
    return success();
  });
  OwningOpRef<ModuleOp> kernel = parseSourceString<ModuleOp>(R"mlir(
func.func @kernel(%x: memref<?xf32>, %y: memref<?xf32>) {
  %t = bufferization.to_tensor %x restrict : memref<?xf32> to tensor<?xf32>
  %u = bufferization.to_tensor %y restrict writable : memref<?xf32> to tensor<?xf32>
  %r = linalg.exp ins(%t : tensor<?xf32>) outs(%u : tensor<?xf32>) -> tensor<?xf32>
  bufferization.materialize_in_destination %r in restrict writable %y : (tensor<?xf32>, memref<?xf32>) -> ()
  return
})mlir",
                                                            &context);
  ASSERT_TRUE(kernel);
  TargetDescription target = llvm::cantFail(parseTarget("cuda:sm_90"));
  EXPECT_TRUE(failed(lowerReferenceKernelToGpuBinary(*kernel, target)));
  EXPECT_NE(message.find("static loop ranges"), std::string::npos) << message;
}

} // namespace

//===- ApplyTunedSchedulesTest.cpp - Scheduled modules compute the same ---===//
//
// A module with several workloads (a matmul with the fill of its accumulator
// and a bias-and-ReLU consumer, a softmax, a row sum) is scheduled by
// --ke-apply-tuned-schedules, with default schedules and with random tuned
// records taken from a database, lowered with lowerModuleToLLVM and run with
// the JIT; its outputs must match the unscheduled module's.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "ke/Codegen/CpuModuleLowering.h"
#include "ke/Codegen/CpuPipeline.h"
#include "ke/Database/Database.h"
#include "ke/Runtime/CpuExecutable.h"
#include "ke/Schedule/Schedule.h"
#include "ke/Transforms/Passes.h"
#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"

using namespace ke;
using ke::testing::IRTest;

namespace {

constexpr llvm::StringLiteral kModel = R"mlir(
func.func @kernel(%A: memref<64x48xf32>, %B: memref<48x80xf32>,
                  %Bias: memref<64x80xf32>, %Out: memref<64x80xf32>,
                  %Rows: memref<64xf32>) {
  %a = bufferization.to_tensor %A restrict : memref<64x48xf32> to tensor<64x48xf32>
  %b = bufferization.to_tensor %B restrict : memref<48x80xf32> to tensor<48x80xf32>
  %bias = bufferization.to_tensor %Bias restrict : memref<64x80xf32> to tensor<64x80xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x80xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x80xf32>) -> tensor<64x80xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x48xf32>, tensor<48x80xf32>)
                     outs(%c : tensor<64x80xf32>) -> tensor<64x80xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<64x80xf32>, tensor<64x80xf32>) outs(%e : tensor<64x80xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      %t = arith.maximumf %s, %zero : f32
      linalg.yield %t : f32
  } -> tensor<64x80xf32>
  %e2 = tensor.empty() : tensor<64x80xf32>
  %p = linalg.softmax dimension(1) ins(%r : tensor<64x80xf32>) outs(%e2 : tensor<64x80xf32>) -> tensor<64x80xf32>
  %er = tensor.empty() : tensor<64xf32>
  %cr = linalg.fill ins(%zero : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%r : tensor<64x80xf32>) outs(%cr : tensor<64xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
  } -> tensor<64xf32>
  bufferization.materialize_in_destination %p in restrict writable %Out : (tensor<64x80xf32>, memref<64x80xf32>) -> ()
  bufferization.materialize_in_destination %sum in restrict writable %Rows : (tensor<64xf32>, memref<64xf32>) -> ()
  return
})mlir";

class ApplyTunedSchedulesTest : public IRTest {
protected:
  void SetUp() override {
    inputs.emplace_back(llvm::ArrayRef<int64_t>{64, 48}, ElementKind::F32);
    inputs.emplace_back(llvm::ArrayRef<int64_t>{48, 80}, ElementKind::F32);
    inputs.emplace_back(llvm::ArrayRef<int64_t>{64, 80}, ElementKind::F32);
    inputs.emplace_back(llvm::ArrayRef<int64_t>{64, 80}, ElementKind::F32);
    inputs.emplace_back(llvm::ArrayRef<int64_t>{64}, ElementKind::F32);
    for (auto [index, buffer] : llvm::enumerate(inputs))
      buffer.fillRandom(100 + index);
  }

  void TearDown() override {
    if (!dbPath.empty())
      for (const char *suffix : {"", "-wal", "-shm"})
        llvm::sys::fs::remove(dbPath + suffix);
  }

  /// Runs the pass on `module`; collects its remarks. False on failure.
  bool apply(mlir::ModuleOp module, llvm::StringRef db) {
    remarks.clear();
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      remarks.push_back(d.str());
      return mlir::success();
    });
    mlir::PassManager pm(&context);
    ApplyTunedSchedulesPassOptions options;
    options.db = db.str();
    options.target = "cpu";
    pm.addPass(createApplyTunedSchedulesPass(options));
    return mlir::succeeded(pm.run(module));
  }

  /// Lowers `module` and runs it on the inputs; returns the two results.
  std::vector<HostBuffer> run(mlir::ModuleOp module) {
    EXPECT_TRUE(mlir::succeeded(lowerModuleToLLVM(module)));
    auto executable = CpuExecutable::create(module);
    if (!executable) {
      ADD_FAILURE() << llvm::toString(executable.takeError());
      return {};
    }
    std::vector<HostBuffer> buffers = inputs;
    buffers[3].poison();
    buffers[4].poison();
    if (llvm::Error error = (*executable)->run(buffers)) {
      ADD_FAILURE() << llvm::toString(std::move(error));
      return {};
    }
    return {buffers[3], buffers[4]};
  }

  void expectMatchesReference(const std::vector<HostBuffer> &outputs) {
    if (reference.empty())
      reference = run(parse(kModel));
    ASSERT_EQ(outputs.size(), 2u);
    ASSERT_EQ(reference.size(), 2u);
    for (unsigned i = 0; i < 2; ++i)
      EXPECT_LE(relativeL2Error(outputs[i], reference[i]), 1e-5)
          << "output " << i;
  }

  /// The matmul of a freshly parsed model.
  mlir::Operation *findMatmul(mlir::ModuleOp module) {
    mlir::Operation *found = nullptr;
    module.walk([&](mlir::linalg::MatmulOp op) { found = op; });
    return found;
  }

  unsigned countRemarks(llvm::StringRef text) {
    return llvm::count_if(remarks, [&](const std::string &remark) {
      return llvm::StringRef(remark).contains(text);
    });
  }

  TargetDescription host = detectHostTarget();
  std::vector<HostBuffer> inputs, reference;
  std::vector<std::string> remarks;
  std::string dbPath;
};

TEST_F(ApplyTunedSchedulesTest, DefaultSchedulesComputeTheReference) {
  mlir::ModuleOp module = parse(kModel);
  ASSERT_TRUE(apply(module, ""));
  // Three groups: matmul (with its fill and consumer), softmax, row sum
  // (with its fill); nothing is left unscheduled.
  EXPECT_EQ(countRemarks("applied the default schedule"), 3u);
  EXPECT_EQ(remarks.size(), 3u);
  bool unscheduled = false;
  module.walk([&](mlir::Operation *op) {
    unscheduled |= isWorkloadAnchor(op) || op->hasAttr(kAnchorAttr);
  });
  EXPECT_FALSE(unscheduled) << "a workload op is left";
  expectMatchesReference(run(module));
}

TEST_F(ApplyTunedSchedulesTest, RandomTunedRecordsComputeTheReference) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("ke-apply", "db", path));
  llvm::sys::fs::remove(path);
  dbPath = path.str().str();
  auto db = TuningDatabase::open(dbPath);
  ASSERT_TRUE(bool(db)) << llvm::toString(db.takeError());

  // Records are made as `ke-opt tune` makes them: against kernel modules of
  // the three anchors that own groups (matmul, softmax, row sum).
  struct Workload {
    std::string key;
    KernelModule kernel;
    mlir::Operation *anchor;
  };
  std::vector<Workload> workloads;
  parse(kModel).walk([&](mlir::Operation *op) {
    if (!mlir::isa<mlir::linalg::MatmulOp, mlir::linalg::SoftmaxOp>(op) &&
        !(mlir::isa<mlir::linalg::GenericOp>(op) &&
          mlir::cast<mlir::linalg::GenericOp>(op).getNumReductionLoops() > 0))
      return;
    mlir::FailureOr<KernelModule> kernel = buildKernelModule(op);
    ASSERT_TRUE(mlir::succeeded(kernel));
    mlir::Operation *anchor = findKernelAnchor(*kernel->module);
    workloads.push_back({computeWorkloadKey(op), std::move(*kernel), anchor});
    ASSERT_FALSE(bool((*db)->addWorkload(
        {workloads.back().key, op->getName().getStringRef().str(), ""})));
  });
  ASSERT_EQ(workloads.size(), 3u);

  Sampler sampler(11);
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<std::string> expected;
    for (Workload &w : workloads) {
      std::optional<Schedule> schedule = sampler.sampleAny(
          getCandidateSketches(w.anchor, host), w.anchor, host);
      ASSERT_TRUE(schedule);
      // Each trial's records are faster than the last, so they are the best.
      TuningRecord record;
      record.workloadKey = w.key;
      record.target = host.name;
      record.pipelineHash = getCpuPipelineHash();
      record.sketch = schedule->rule->getName().str();
      llvm::raw_string_ostream(record.knobs)
          << *schedule->toJSON().getAsObject()->get("knobs");
      record.script = schedule->getScript(w.anchor, host);
      record.seconds = {1.0 / (trial + 1)};
      record.medianSeconds = 1.0 / (trial + 1);
      ASSERT_FALSE(bool((*db)->addRecords({record})));
      expected.push_back("applied tuned schedule " +
                         schedule->rule->getName().str() + " {" +
                         schedule->getAssignment().str() + "}");
    }
    mlir::ModuleOp module = parse(kModel);
    ASSERT_TRUE(apply(module, dbPath));
    for (const std::string &text : expected)
      EXPECT_EQ(countRemarks(text), 1u) << "trial " << trial << ": " << text;
    // The outlined group is the kernel the record was made on: the rule
    // writes the same script for it.
    EXPECT_EQ(countRemarks("another script"), 0u);
    expectMatchesReference(run(module));
  }
}

TEST_F(ApplyTunedSchedulesTest, MissingDatabaseIsAnError) {
  mlir::ModuleOp module = parse(kModel);
  EXPECT_FALSE(apply(module, "/nonexistent/ke-tuning.db"));
  EXPECT_EQ(countRemarks("does not exist"), 1u);
}

} // namespace

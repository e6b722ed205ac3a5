//===- ModelPlanTest.cpp - Whole functions as GPU model plans -------------===//
//
// The plan of a model (lib/Compiler/ModelPlan.h), read back from its blob:
// which buffers are the caller's, which are temporaries, when a kernel may
// write in place and when it needs a copy, and what cannot be planned.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "../../lib/Compiler/ModelPlan.h"

#include "ke/Compiler/ModelFormat.h"
#include "ke/Workload/Workload.h"

#include "mlir/IR/Diagnostics.h"

#include <cstring>

using namespace ke;
using ke::testing::IRTest;

namespace {

/// A plan read back from its blob.
struct Plan {
  ke_model_header header;
  std::vector<ke_model_slot> slots;
  std::vector<ke_model_step> steps;
  std::vector<ke_model_arg> args;
  std::vector<ke_model_box> boxes;
  std::vector<ke_model_tensor_map> tensorMaps;
  std::string signature;
};

template <typename Record>
std::vector<Record> readArray(const std::string &blob, uint64_t offset,
                              uint32_t count) {
  std::vector<Record> records(count);
  std::memcpy(records.data(), blob.data() + offset, count * sizeof(Record));
  return records;
}

class ModelPlanTest : public IRTest {
protected:
  ModelPlanTest()
      : handler(&context, [this](mlir::Diagnostic &diag) {
          diagnostics += diag.str() + "\n";
          return mlir::success();
        }) {}

  /// Plans the public function of `source` with one launch per group whose
  /// parameters are the aligned pointer of every kernel buffer (and, with
  /// `tensorMap`, then a TMA tensor map of the first input in 4 x 4 boxes).
  mlir::FailureOr<Plan> plan(llvm::StringRef source, bool tensorMap = false) {
    mlir::ModuleOp module = parse(source);
    auto func = *module.getOps<mlir::func::FuncOp>().begin();
    std::vector<std::pair<mlir::Operation *, llvm::SmallVector<mlir::Operation *>>>
        anchors;
    func.walk([&](mlir::Operation *op) {
      if (isWorkloadAnchor(op) && !getFusingAnchor(op))
        anchors.emplace_back(op, getKernelGroup(op));
    });
    kernels.clear();
    binaries.clear();
    kernels.reserve(anchors.size());
    binaries.reserve(anchors.size());
    std::vector<PlannedGroup> groups;
    for (auto &[anchor, ops] : anchors) {
      mlir::FailureOr<KernelModule> kernel = buildKernelModule(anchor);
      if (mlir::failed(kernel))
        return mlir::failure();
      kernels.push_back(std::move(*kernel));
      GpuKernelBinary &binary = binaries.emplace_back();
      binary.format = "ptx";
      binary.assembly = ".version 8.0";
      GpuLaunch &launch = binary.launches.emplace_back();
      launch.kernelName = "k";
      for (unsigned b = 0; b < kernels.back().arguments.size(); ++b) {
        GpuLaunchArgument arg;
        arg.kind = GpuLaunchArgument::Kind::BufferField;
        arg.buffer = b;
        arg.field = 1;
        launch.arguments.push_back(arg);
      }
      if (tensorMap) {
        GpuTensorMap &map = binary.tensorMaps.emplace_back();
        const auto &args = kernels.back().arguments;
        map.buffer = llvm::find_if(args, [](const KernelArgument &a) {
                       return a.role == BufferRole::Input;
                     }) - args.begin();
        map.dataType = 7;
        map.elementBytes = 4;
        map.shape.assign(args[map.buffer].shape.begin(),
                         args[map.buffer].shape.end());
        map.box = {4, 4};
        map.swizzleBytes = 128;
        GpuLaunchArgument arg;
        arg.kind = GpuLaunchArgument::Kind::TensorMap;
        launch.arguments.push_back(arg);
      }
      groups.push_back({ops, &kernels.back(), &binary});
    }
    llvm::Expected<TargetDescription> target = parseTarget("cuda:sm_90");
    EXPECT_TRUE(bool(target));
    mlir::FailureOr<std::string> blob =
        buildModelBlob(func, groups, *target, "hash");
    if (mlir::failed(blob))
      return mlir::failure();
    Plan p;
    std::memcpy(&p.header, blob->data(), sizeof(p.header));
    EXPECT_EQ(p.header.magic, KE_MODEL_MAGIC);
    p.slots = readArray<ke_model_slot>(*blob, p.header.slots,
                                       p.header.num_slots);
    p.steps = readArray<ke_model_step>(*blob, p.header.steps,
                                       p.header.num_steps);
    p.args = readArray<ke_model_arg>(*blob, p.header.args, p.header.num_args);
    p.boxes = readArray<ke_model_box>(*blob, p.header.boxes,
                                      p.header.num_boxes);
    p.tensorMaps = readArray<ke_model_tensor_map>(
        *blob, p.header.tensor_maps, p.header.num_tensor_maps);
    p.signature = blob->data() + p.header.signature;
    return p;
  }

  static unsigned count(const Plan &p, ke_slot_kind kind) {
    return llvm::count_if(p.slots, [&](const ke_model_slot &s) {
      return s.kind == unsigned(kind);
    });
  }

  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler;
  std::vector<KernelModule> kernels;
  std::vector<GpuKernelBinary> binaries;
};

// As graph preparation leaves it: each destination an empty of its own,
// ahead of the ops (so the relu is in the matmul's kernel group).
constexpr llvm::StringLiteral kMatmulRelu = R"mlir(
func.func @f(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %z = arith.constant 0.0 : f32
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.maximumf %x, %z : f32
      linalg.yield %y : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
})mlir";

TEST_F(ModelPlanTest, OneGroupWritesItsTemporariesInPlace) {
  mlir::FailureOr<Plan> p = plan(kMatmulRelu);
  ASSERT_TRUE(mlir::succeeded(p)) << diagnostics;
  EXPECT_EQ(p->header.num_inputs, 2u);
  EXPECT_EQ(p->header.num_outputs, 1u);
  // The accumulator is a temporary; the result's temporary is the caller's
  // output buffer, so nothing is copied.
  EXPECT_EQ(count(*p, KE_SLOT_INPUT), 2u);
  EXPECT_EQ(count(*p, KE_SLOT_OUTPUT), 1u);
  EXPECT_EQ(count(*p, KE_SLOT_TEMP), 1u);
  ASSERT_EQ(p->steps.size(), 1u);
  EXPECT_EQ(p->steps[0].op, unsigned(KE_STEP_LAUNCH));
  // Every kernel buffer is a pointer to a distinct slot.
  ASSERT_EQ(p->args.size(), 4u);
  for (const ke_model_arg &arg : p->args)
    EXPECT_EQ(arg.kind, unsigned(KE_ARG_POINTER));
  EXPECT_NE(p->signature.find("\"shape\":[8,16]"), std::string::npos);
}

TEST_F(ModelPlanTest, TensorMapsNameTheirBufferSlot) {
  // A launch that copies its first input (the matmul's A, the caller's
  // input #0) with TMA: its parameter is a tensor map record over that
  // input's slot, which the runtime encodes with the slot's address at
  // each call.
  mlir::FailureOr<Plan> p = plan(kMatmulRelu, /*tensorMap=*/true);
  ASSERT_TRUE(mlir::succeeded(p)) << diagnostics;
  ASSERT_EQ(p->args.size(), 5u);
  const ke_model_arg &map = p->args.back();
  EXPECT_EQ(map.kind, unsigned(KE_ARG_TENSOR_MAP));
  EXPECT_EQ(map.value, 0u);
  EXPECT_EQ(p->slots[map.slot].kind, unsigned(KE_SLOT_INPUT));
  EXPECT_EQ(p->slots[map.slot].index, 0u);
  ASSERT_EQ(p->header.num_tensor_maps, 1u);
  const ke_model_tensor_map &record = p->tensorMaps[0];
  EXPECT_EQ(record.data_type, 7u);
  EXPECT_EQ(record.element_bytes, 4u);
  EXPECT_EQ(record.rank, 2u);
  EXPECT_EQ(record.shape[0], 8);
  EXPECT_EQ(record.shape[1], 4);
  EXPECT_EQ(record.box[0], 4);
  EXPECT_EQ(record.swizzle_bytes, 128u);
}

TEST_F(ModelPlanTest, AnAccumulatorArgumentIsCopiedNotOverwritten) {
  // The matmul accumulates into the caller's %c: the kernel gets a copy.
  mlir::FailureOr<Plan> p = plan(R"mlir(
func.func @f(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %c: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %m : tensor<8x16xf32>
})mlir");
  ASSERT_TRUE(mlir::succeeded(p)) << diagnostics;
  ASSERT_EQ(p->steps.size(), 2u);
  EXPECT_EQ(p->steps[0].op, unsigned(KE_STEP_COPY));
  EXPECT_EQ(p->steps[0].bytes, 8u * 16u * 4u);
  EXPECT_EQ(p->slots[p->steps[0].b].kind, unsigned(KE_SLOT_INPUT));
  EXPECT_EQ(p->steps[1].op, unsigned(KE_STEP_LAUNCH));
}

TEST_F(ModelPlanTest, ReturningAnInputCopiesIt) {
  mlir::FailureOr<Plan> p = plan(R"mlir(
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
})mlir");
  ASSERT_TRUE(mlir::succeeded(p)) << diagnostics;
  ASSERT_EQ(p->steps.size(), 1u);
  EXPECT_EQ(p->steps[0].op, unsigned(KE_STEP_COPY));
  EXPECT_EQ(p->slots[p->steps[0].a].kind, unsigned(KE_SLOT_OUTPUT));
}

TEST_F(ModelPlanTest, ReshapesShareTheirSourcesBuffer) {
  mlir::FailureOr<Plan> p = plan(R"mlir(
func.func @f(%a: tensor<4x4xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.negf %x : f32
      linalg.yield %y : f32
  } -> tensor<4x4xf32>
  %c = tensor.collapse_shape %r [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  return %c : tensor<16xf32>
})mlir");
  ASSERT_TRUE(mlir::succeeded(p)) << diagnostics;
  // The generic writes straight into the caller's output.
  ASSERT_EQ(p->steps.size(), 1u);
  EXPECT_EQ(count(*p, KE_SLOT_OUTPUT), 1u);
  EXPECT_EQ(count(*p, KE_SLOT_TEMP), 0u);
}

TEST_F(ModelPlanTest, PadsAreAFillAndABoxCopy) {
  // NCHW padding of H and W: N and C merge, so one 3-D box copies the
  // interior (rows of 8 floats into rows of 10, slices of 6 rows into
  // slices of 8 rows) after the fill with 1.0.
  mlir::FailureOr<Plan> p = plan(R"mlir(
func.func @f(%a: tensor<2x3x6x8xf32>) -> tensor<2x3x8x10xf32> {
  %one = arith.constant 1.0 : f32
  %p = tensor.pad %a low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %one : f32
  } : tensor<2x3x6x8xf32> to tensor<2x3x8x10xf32>
  return %p : tensor<2x3x8x10xf32>
})mlir");
  ASSERT_TRUE(mlir::succeeded(p)) << diagnostics;
  ASSERT_EQ(p->steps.size(), 2u);
  EXPECT_EQ(p->steps[0].op, unsigned(KE_STEP_FILL));
  EXPECT_EQ(p->steps[0].b, 0x3f800000u);
  EXPECT_EQ(p->steps[0].reserved, 4u);
  EXPECT_EQ(p->steps[0].bytes, 2u * 3 * 8 * 10 * 4);
  EXPECT_EQ(p->steps[1].op, unsigned(KE_STEP_BOX));
  ASSERT_EQ(p->boxes.size(), 1u);
  const ke_model_box &box = p->boxes[0];
  EXPECT_EQ(box.width, 8u * 4);
  EXPECT_EQ(box.height, 6u);
  EXPECT_EQ(box.depth, 6u); // N * C
  EXPECT_EQ(box.src_pitch, 8u * 4);
  EXPECT_EQ(box.src_rows, 6u);
  EXPECT_EQ(box.dst_pitch, 10u * 4);
  EXPECT_EQ(box.dst_rows, 8u);
  EXPECT_EQ(box.dst_offset, (10u + 1) * 4);
  EXPECT_EQ(box.src_offset, 0u);
  // The padded temporary is the caller's output.
  EXPECT_EQ(p->slots[box.dst_slot].kind, unsigned(KE_SLOT_OUTPUT));
}

TEST_F(ModelPlanTest, SlicesAreBoxCopies) {
  // The middle third of the last dimension (torch's chunk): rows of 32
  // floats, 96 apart in the source, 32 in the result; the outer two
  // dimensions merge into the rows.
  mlir::FailureOr<Plan> p = plan(R"mlir(
func.func @f(%a: tensor<2x8x96xf32>) -> tensor<2x8x32xf32> {
  %s = tensor.extract_slice %a[0, 0, 32] [2, 8, 32] [1, 1, 1] : tensor<2x8x96xf32> to tensor<2x8x32xf32>
  return %s : tensor<2x8x32xf32>
})mlir");
  ASSERT_TRUE(mlir::succeeded(p)) << diagnostics;
  ASSERT_EQ(p->boxes.size(), 1u);
  const ke_model_box &box = p->boxes[0];
  EXPECT_EQ(box.width, 32u * 4);
  EXPECT_EQ(box.height, 16u);
  EXPECT_EQ(box.depth, 1u);
  EXPECT_EQ(box.src_pitch, 96u * 4);
  EXPECT_EQ(box.dst_pitch, 32u * 4);
  EXPECT_EQ(box.src_offset, 32u * 4);
}

TEST_F(ModelPlanTest, ConcatenationsAreBoxCopiesAtTheirOffsets) {
  // torch.cat along the last dimension: each input's rows of 8 and 24
  // floats land 32 floats apart in the result, the second at column 8.
  mlir::FailureOr<Plan> p = plan(R"mlir(
func.func @f(%a: tensor<2x4x8xf32>, %b: tensor<2x4x24xf32>) -> tensor<2x4x32xf32> {
  %c = tensor.concat dim(2) %a, %b : (tensor<2x4x8xf32>, tensor<2x4x24xf32>) -> tensor<2x4x32xf32>
  return %c : tensor<2x4x32xf32>
})mlir");
  ASSERT_TRUE(mlir::succeeded(p)) << diagnostics;
  ASSERT_EQ(p->boxes.size(), 2u);
  const ke_model_box &first = p->boxes[0], &second = p->boxes[1];
  EXPECT_EQ(first.width, 8u * 4);
  EXPECT_EQ(first.height, 8u);
  EXPECT_EQ(first.src_pitch, 8u * 4);
  EXPECT_EQ(first.dst_pitch, 32u * 4);
  EXPECT_EQ(first.dst_offset, 0u);
  EXPECT_EQ(second.width, 24u * 4);
  EXPECT_EQ(second.height, 8u);
  EXPECT_EQ(second.src_pitch, 24u * 4);
  EXPECT_EQ(second.dst_pitch, 32u * 4);
  EXPECT_EQ(second.dst_offset, 8u * 4);
  EXPECT_EQ(first.dst_slot, second.dst_slot);
  EXPECT_EQ(p->slots[first.dst_slot].kind, unsigned(KE_SLOT_OUTPUT));
  // Along the first dimension each input is one contiguous run.
  p = plan(R"mlir(
func.func @f(%a: tensor<4x8xf32>, %b: tensor<2x8xf32>) -> tensor<6x8xf32> {
  %c = tensor.concat dim(0) %a, %b : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<6x8xf32>
  return %c : tensor<6x8xf32>
})mlir");
  ASSERT_TRUE(mlir::succeeded(p)) << diagnostics;
  ASSERT_EQ(p->boxes.size(), 2u);
  EXPECT_EQ(p->boxes[0].width, 32u * 4);
  EXPECT_EQ(p->boxes[0].height, 1u);
  EXPECT_EQ(p->boxes[1].width, 16u * 4);
  EXPECT_EQ(p->boxes[1].dst_offset, 32u * 4);
}

TEST_F(ModelPlanTest, OpsOutsideKernelGroupsAreErrors) {
  mlir::FailureOr<Plan> p = plan(R"mlir(
func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %z = arith.constant 1.0 : f32
  %c = tensor.splat %z : tensor<8xf32>
  return %c : tensor<8xf32>
})mlir");
  EXPECT_TRUE(mlir::failed(p));
  EXPECT_NE(diagnostics.find("tensor.splat has no GPU lowering outside a "
                             "kernel group"),
            std::string::npos);
}

} // namespace

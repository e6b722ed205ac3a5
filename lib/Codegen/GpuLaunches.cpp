//===- GpuLaunches.cpp - Launches of an outlined kernel module ------------===//

#include "GpuLaunches.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace ke;

namespace {

/// A launch dimension that must be a constant.
LogicalResult readDimension(gpu::LaunchFuncOp launch, Value value,
                            llvm::StringRef what, uint32_t &out) {
  APInt constant;
  if (!matchPattern(value, m_ConstantInt(&constant)))
    return launch.emitError("the ")
           << what << " size of the launch is not a constant; ke launches "
           << "static shapes only";
  if (constant.isNegative() || constant.getZExtValue() > UINT32_MAX)
    return launch.emitError("the ") << what << " size is out of range";
  out = static_cast<uint32_t>(constant.getZExtValue());
  return success();
}

/// Appends the launch arguments that one kernel operand expands to.
/// The scratch buffer index of a static host allocation (a buffer passed
/// from one launch to the next), adding it to `scratch` on first sight.
FailureOr<unsigned> getScratchIndex(gpu::LaunchFuncOp launch,
                                    memref::AllocOp alloc,
                                    std::vector<Operation *> &allocs,
                                    std::vector<GpuScratchBuffer> &scratch) {
  auto it = llvm::find(allocs, alloc.getOperation());
  if (it != allocs.end())
    return unsigned(it - allocs.begin());
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      !type.getElementType().isIntOrFloat() || type.getMemorySpace())
    return launch.emitError("a launch takes a host allocation of type ")
           << type << "; scratch buffers must be static and contiguous";
  GpuScratchBuffer buffer;
  buffer.shape.assign(type.getShape().begin(), type.getShape().end());
  buffer.bytes = type.getNumElements() *
                 llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  allocs.push_back(alloc);
  scratch.push_back(std::move(buffer));
  return unsigned(scratch.size() - 1);
}

LogicalResult appendArguments(gpu::LaunchFuncOp launch, func::FuncOp host,
                              Value operand,
                              std::vector<GpuLaunchArgument> &args,
                              std::vector<Operation *> &allocs,
                              std::vector<GpuScratchBuffer> &scratch) {
  if (auto memref = dyn_cast<MemRefType>(operand.getType())) {
    auto arg = dyn_cast<BlockArgument>(operand);
    auto alloc = operand.getDefiningOp<memref::AllocOp>();
    GpuLaunchArgument::Kind kind = GpuLaunchArgument::Kind::BufferField;
    unsigned buffer = 0;
    if (arg && arg.getOwner() == &host.getBody().front()) {
      buffer = arg.getArgNumber();
    } else if (alloc && alloc->getParentOp() == host) {
      FailureOr<unsigned> index =
          getScratchIndex(launch, alloc, allocs, scratch);
      if (failed(index))
        return failure();
      kind = GpuLaunchArgument::Kind::ScratchField;
      buffer = *index;
    } else {
      return launch.emitError("a launch takes a buffer that is neither an "
                              "argument of @kernel nor a host allocation");
    }
    // Allocated pointer, aligned pointer, offset, sizes, strides.
    unsigned fields = 3 + 2 * memref.getRank();
    for (unsigned field = 0; field < fields; ++field) {
      GpuLaunchArgument a;
      a.kind = kind;
      a.buffer = buffer;
      a.field = field;
      args.push_back(a);
    }
    return success();
  }
  GpuLaunchArgument a;
  Type type = operand.getType();
  APInt intValue;
  APFloat floatValue(0.0);
  if (matchPattern(operand, m_ConstantInt(&intValue)) &&
      (type.isIndex() || type.isInteger(64) || type.isInteger(32))) {
    a.kind = type.isInteger(32) ? GpuLaunchArgument::Kind::I32
                                : GpuLaunchArgument::Kind::Index;
    a.value = intValue.getSExtValue();
  } else if (matchPattern(operand, m_ConstantFloat(&floatValue)) &&
             (type.isF32() || type.isF64())) {
    a.kind = type.isF32() ? GpuLaunchArgument::Kind::F32
                          : GpuLaunchArgument::Kind::F64;
    a.value = static_cast<int64_t>(
        floatValue.bitcastToAPInt().getZExtValue());
  } else {
    return launch.emitError("a launch takes a value of type ")
           << type << " that is neither a buffer nor a constant";
  }
  args.push_back(a);
  return success();
}

} // namespace

FailureOr<std::vector<GpuLaunch>>
ke::readGpuLaunches(ModuleOp kernel, std::vector<GpuScratchBuffer> *scratch) {
  std::vector<GpuScratchBuffer> ignored;
  if (!scratch)
    scratch = &ignored;
  scratch->clear();
  std::vector<Operation *> allocs;
  auto host = kernel.lookupSymbol<func::FuncOp>(kKernelFunctionName);
  if (!host)
    return kernel.emitError("the kernel module has no @kernel");
  std::vector<GpuLaunch> launches;
  WalkResult result = host.walk([&](gpu::LaunchFuncOp op) {
    GpuLaunch launch;
    launch.kernelName = op.getKernelName().str();
    gpu::KernelDim3 grid = op.getGridSizeOperandValues();
    gpu::KernelDim3 block = op.getBlockSizeOperandValues();
    if (failed(readDimension(op, grid.x, "grid x", launch.grid[0])) ||
        failed(readDimension(op, grid.y, "grid y", launch.grid[1])) ||
        failed(readDimension(op, grid.z, "grid z", launch.grid[2])) ||
        failed(readDimension(op, block.x, "block x", launch.block[0])) ||
        failed(readDimension(op, block.y, "block y", launch.block[1])) ||
        failed(readDimension(op, block.z, "block z", launch.block[2])))
      return WalkResult::interrupt();
    if (Value shared = op.getDynamicSharedMemorySize())
      if (failed(readDimension(op, shared, "dynamic shared memory",
                               launch.dynamicSharedMemoryBytes)))
        return WalkResult::interrupt();
    for (Value operand : op.getKernelOperands())
      if (failed(appendArguments(op, host, operand, launch.arguments, allocs,
                                  *scratch)))
        return WalkResult::interrupt();
    launches.push_back(std::move(launch));
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  if (launches.empty())
    return kernel.emitError("@kernel launches nothing");
  return launches;
}

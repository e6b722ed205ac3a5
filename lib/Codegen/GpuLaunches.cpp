//===- GpuLaunches.cpp - Launches of an outlined kernel module ------------===//

#include "GpuLaunches.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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

/// What the launches name beyond the kernel module's buffers.
struct HostState {
  std::vector<Operation *> allocs;
  std::vector<GpuScratchBuffer> &scratch;
  std::vector<Operation *> mapOps;
  std::vector<GpuTensorMap> &tensorMaps;
};

/// The buffer `memref` is: @kernel's argument, or a scratch buffer (then
/// `scratch` is set).
FailureOr<unsigned> getBuffer(gpu::LaunchFuncOp launch, func::FuncOp host,
                              Value memref, HostState &state, bool &scratch) {
  auto arg = dyn_cast<BlockArgument>(memref);
  auto alloc = memref.getDefiningOp<memref::AllocOp>();
  scratch = false;
  if (arg && arg.getOwner() == &host.getBody().front())
    return arg.getArgNumber();
  if (alloc && alloc->getParentOp() == host) {
    scratch = true;
    return getScratchIndex(launch, alloc, state.allocs, state.scratch);
  }
  return launch.emitError("a launch takes a buffer that is neither an "
                          "argument of @kernel nor a host allocation");
}

/// The tensor map index of a marked llvm.inttoptr (see kTensorMapAttr),
/// adding it to the state's maps on first sight.
FailureOr<unsigned> getTensorMapIndex(gpu::LaunchFuncOp launch,
                                      func::FuncOp host, LLVM::IntToPtrOp op,
                                      HostState &state) {
  auto it = llvm::find(state.mapOps, op.getOperation());
  if (it != state.mapOps.end())
    return unsigned(it - state.mapOps.begin());
  auto spec = op->getAttrOfType<DictionaryAttr>(kTensorMapAttr);
  auto widen = op.getArg().getDefiningOp<arith::IndexCastOp>();
  auto extract =
      widen ? widen.getIn().getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>()
           : nullptr;
  auto box = spec ? spec.getAs<DenseI64ArrayAttr>("box") : nullptr;
  auto swizzle = spec ? spec.getAs<IntegerAttr>("swizzle") : nullptr;
  if (!extract || !box || !swizzle)
    return op.emitError("a tensor map must be the aligned pointer of a "
                        "buffer with {box, swizzle}");
  auto type = cast<MemRefType>(extract.getSource().getType());
  Type element = type.getElementType();
  GpuTensorMap map;
  map.dataType = element.isF16() ? 6 : element.isF32() ? 7 : element.isBF16() ? 9 : 0;
  if (!map.dataType || !type.hasStaticShape() ||
      !type.getLayout().isIdentity() ||
      box.size() != size_t(type.getRank()) || type.getRank() > 5)
    return op.emitError("a tensor map over ")
           << type << " with a box of rank " << box.size()
           << ": ke maps contiguous f16, bf16 and f32 buffers of rank 5 or "
              "less";
  bool scratch = false;
  FailureOr<unsigned> buffer =
      getBuffer(launch, host, extract.getSource(), state, scratch);
  if (failed(buffer))
    return failure();
  map.scratch = scratch;
  map.buffer = *buffer;
  map.elementBytes = element.getIntOrFloatBitWidth() / 8;
  map.shape.assign(type.getShape().begin(), type.getShape().end());
  map.box.assign(box.asArrayRef().begin(), box.asArrayRef().end());
  map.swizzleBytes = swizzle.getInt();
  state.mapOps.push_back(op);
  state.tensorMaps.push_back(std::move(map));
  return unsigned(state.tensorMaps.size() - 1);
}

LogicalResult appendArguments(gpu::LaunchFuncOp launch, func::FuncOp host,
                              Value operand,
                              std::vector<GpuLaunchArgument> &args,
                              HostState &state) {
  if (auto map = operand.getDefiningOp<LLVM::IntToPtrOp>();
      map && map->hasAttr(kTensorMapAttr)) {
    FailureOr<unsigned> index = getTensorMapIndex(launch, host, map, state);
    if (failed(index))
      return failure();
    GpuLaunchArgument a;
    a.kind = GpuLaunchArgument::Kind::TensorMap;
    a.buffer = *index;
    args.push_back(a);
    return success();
  }
  if (auto memref = dyn_cast<MemRefType>(operand.getType())) {
    bool scratch = false;
    FailureOr<unsigned> index = getBuffer(launch, host, operand, state, scratch);
    if (failed(index))
      return failure();
    GpuLaunchArgument::Kind kind = scratch
                                       ? GpuLaunchArgument::Kind::ScratchField
                                       : GpuLaunchArgument::Kind::BufferField;
    unsigned buffer = *index;
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

Value ke::makeTensorMap(OpBuilder &builder, Location loc, Value buffer,
                        ArrayRef<int64_t> box) {
  Value address =
      builder.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer);
  Value wide =
      builder.create<arith::IndexCastOp>(loc, builder.getI64Type(), address);
  auto map = builder.create<LLVM::IntToPtrOp>(
      loc, LLVM::LLVMPointerType::get(builder.getContext()), wide);
  map->setAttr(kTensorMapAttr,
               builder.getDictionaryAttr(
                   {builder.getNamedAttr("box", builder.getDenseI64ArrayAttr(box)),
                    builder.getNamedAttr("swizzle",
                                         builder.getI64IntegerAttr(128))}));
  return map;
}

FailureOr<std::vector<GpuLaunch>>
ke::readGpuLaunches(ModuleOp kernel, std::vector<GpuScratchBuffer> *scratch,
                    std::vector<GpuTensorMap> *tensorMaps) {
  std::vector<GpuScratchBuffer> ignored;
  std::vector<GpuTensorMap> ignoredMaps;
  if (!scratch)
    scratch = &ignored;
  if (!tensorMaps)
    tensorMaps = &ignoredMaps;
  scratch->clear();
  tensorMaps->clear();
  HostState state{{}, *scratch, {}, *tensorMaps};
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
      if (failed(appendArguments(op, host, operand, launch.arguments, state)))
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

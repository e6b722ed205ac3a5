//===- ModelPlan.cpp - A whole function as a GPU model's plan -------------===//
//
// Walks the function once, in order. Every tensor value gets a slot: the
// function's arguments are the caller's inputs, tensor.empty a temporary,
// constants are uploaded once, reshapes share their source's slot, slices
// and pads are box copies (and a fill) into a temporary. A kernel
// group is launched where its last op stands, on the slots of the values
// its buffers stand for; a buffer it writes (its results' inits, its
// scratch) is written in place only when it is a temporary that nothing
// else reads (a tensor.empty used once), and otherwise is a fresh
// temporary, copied from the value first when the kernel reads it
// (an accumulator). The return hands each result's temporary to the caller
// as its output buffer, or copies into it.
//
//===----------------------------------------------------------------------===//

#include "ModelPlan.h"

#include "ke/Compiler/ModelFormat.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/JSON.h"

#include <cstring>

using namespace mlir;
using namespace ke;

namespace {

/// The element type's name in the signature ("f32", "bf16", "i64").
std::string getDtypeName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << type;
  return name;
}

/// Bytes of a static tensor (i1 takes a byte, as in memory).
uint64_t getTensorBytes(RankedTensorType type) {
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  return uint64_t(type.getNumElements()) * std::max(1u, (bits + 7) / 8);
}

/// The bytes of a tensor constant, splats expanded; std::nullopt for
/// attributes it cannot read.
std::optional<std::string> getConstantBytes(Attribute value,
                                            RankedTensorType type) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    ArrayRef<char> raw = dense.getRawData();
    uint64_t bytes = getTensorBytes(type);
    if (type.getElementType().isInteger(1))
      return std::nullopt; // packed bits
    if (!dense.isSplat())
      return std::string(raw.begin(), raw.end());
    std::string data;
    data.reserve(bytes);
    while (data.size() < bytes)
      data.append(raw.begin(), raw.end());
    return data;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    ArrayRef<char> data = blob->getData();
    if (data.size() != getTensorBytes(type))
      return std::nullopt;
    return std::string(data.begin(), data.end());
  }
  return std::nullopt;
}

/// Appends records and bytes, 8-byte aligned, and remembers where.
class BlobWriter {
public:
  BlobWriter() { blob.resize(sizeof(ke_model_header)); }
  template <typename Record> uint64_t addArray(ArrayRef<Record> records) {
    return addBytes(records.data(), records.size() * sizeof(Record));
  }
  uint64_t addBytes(const void *data, size_t bytes) {
    align();
    uint64_t offset = blob.size();
    blob.append(static_cast<const char *>(data), bytes);
    return offset;
  }
  /// `text` with a NUL.
  uint64_t addString(StringRef text) {
    uint64_t offset = addBytes(text.data(), text.size());
    blob.push_back('\0');
    return offset;
  }
  std::string finish(const ke_model_header &header) {
    std::memcpy(blob.data(), &header, sizeof(header));
    align();
    return std::move(blob);
  }

private:
  void align() {
    while (blob.size() % 8)
      blob.push_back('\0');
  }
  std::string blob;
};

class PlanBuilder {
public:
  PlanBuilder(func::FuncOp func, ArrayRef<PlannedGroup> groups)
      : func(func), groups(groups) {}

  LogicalResult build();
  /// Places every temporary in the model's arena: two whose live ranges
  /// (first to last step that touches them) overlap never share bytes.
  LogicalResult placeTemporaries();
  std::string writeBlob(const TargetDescription &target,
                        StringRef pipelineHash);

private:
  uint32_t addSlot(uint64_t bytes, ke_slot_kind kind, uint32_t index = 0) {
    slots.push_back({bytes, uint32_t(kind), index});
    return slots.size() - 1;
  }
  uint32_t addTemp(RankedTensorType type) {
    return addSlot(getTensorBytes(type), KE_SLOT_TEMP);
  }
  void addCopy(uint32_t to, uint32_t from, uint64_t bytes) {
    steps.push_back({KE_STEP_COPY, to, from, 0, bytes});
  }
  /// The slot of `value`, or an error at `user`.
  FailureOr<uint32_t> slotOf(Value value, Operation *user);
  LogicalResult addConstant(Operation *op, Attribute value,
                            RankedTensorType type);
  LogicalResult launchGroup(const PlannedGroup &group);
  LogicalResult addReturn(func::ReturnOp op);
  /// A box of `sizes` elements copied from `src` (a row-major tensor of
  /// `srcShape`, starting at `srcOffsets`) to `dst` (of `dstShape`, at
  /// `dstOffsets`), as few box copies as cuMemcpy3D's model allows.
  LogicalResult addSliceCopy(Operation *op, uint32_t dst,
                             ArrayRef<int64_t> dstShape,
                             ArrayRef<int64_t> dstOffsets, uint32_t src,
                             ArrayRef<int64_t> srcShape,
                             ArrayRef<int64_t> srcOffsets,
                             ArrayRef<int64_t> sizes, unsigned elementBytes);
  LogicalResult addExtractSlice(tensor::ExtractSliceOp op);
  LogicalResult addInsertSlice(tensor::InsertSliceOp op);
  LogicalResult addPad(tensor::PadOp op);
  /// A concatenation: each input copied into a fresh temporary at its
  /// offset along the concatenated dimension (as an insert_slice would be).
  LogicalResult addConcat(tensor::ConcatOp op);
  /// The slot a value writer may write into: `value`'s own when nothing
  /// else reads it, else a fresh temporary (holding `value` when `keep`).
  FailureOr<uint32_t> writableSlotFor(Value value, Operation *user, bool keep);

  func::FuncOp func;
  ArrayRef<PlannedGroup> groups;
  llvm::DenseMap<Value, uint32_t> slotOfValue;
  /// Temporaries that an op may write in place: tensor.empty with one use.
  llvm::SmallPtrSet<Value, 8> writableInPlace;
  std::vector<ke_model_slot> slots;
  std::vector<ke_model_step> steps;
  std::vector<ke_model_launch> launches;
  std::vector<ke_model_arg> args;
  std::vector<ke_model_image> images;
  std::vector<ke_model_constant> constants;
  std::vector<ke_model_box> boxes;
  std::vector<ke_model_tensor_map> tensorMaps;
  /// The size of the temporaries' arena (placeTemporaries).
  uint64_t temporaryBytes = 0;
  /// Bytes for images, constants and kernel names, placed after the records.
  std::vector<std::string> imageBytes, constantBytes, kernelNames;
};

FailureOr<uint32_t> PlanBuilder::slotOf(Value value, Operation *user) {
  auto it = slotOfValue.find(value);
  if (it != slotOfValue.end())
    return it->second;
  if (Operation *def = value.getDefiningOp())
    return def->emitError("ke: ")
           << def->getName()
           << " has no GPU lowering outside a kernel group yet; a model "
              "compiled for a GPU may hold only kernel groups, "
              "tensor.empty, reshapes, slices, pads, concatenations, "
              "constants and its return";
  return user->emitError("ke: this value has no buffer in the GPU model");
}

LogicalResult PlanBuilder::addConstant(Operation *op, Attribute value,
                                       RankedTensorType type) {
  std::optional<std::string> bytes = getConstantBytes(value, type);
  if (!bytes)
    return op->emitError("ke: cannot read the data of this constant for the "
                         "GPU model");
  constants.push_back({0, bytes->size()});
  constantBytes.push_back(std::move(*bytes));
  slotOfValue[op->getResult(0)] =
      addSlot(getTensorBytes(type), KE_SLOT_CONSTANT, constants.size() - 1);
  return success();
}

LogicalResult PlanBuilder::launchGroup(const PlannedGroup &group) {
  const KernelModule &kernel = *group.kernel;
  const GpuKernelBinary &binary = *group.binary;
  llvm::SmallPtrSet<Operation *, 8> inGroup(group.ops.begin(),
                                            group.ops.end());
  // The buffer each kernel argument is: its value's slot when the kernel
  // only reads it or may overwrite it; otherwise a fresh temporary.
  llvm::SmallVector<uint32_t> argumentSlots;
  for (auto [index, value] : llvm::enumerate(kernel.argumentValues)) {
    const KernelArgument &arg = kernel.arguments[index];
    FailureOr<uint32_t> slot = slotOf(value, group.ops.back());
    if (failed(slot))
      return failure();
    bool written = arg.role != BufferRole::Input;
    if (written && !writableInPlace.contains(value)) {
      uint32_t temp = addTemp(cast<RankedTensorType>(value.getType()));
      if (arg.role == BufferRole::Accumulator)
        addCopy(temp, *slot,
                getTensorBytes(cast<RankedTensorType>(value.getType())));
      *slot = temp;
    }
    writableInPlace.erase(value); // written once at most
    argumentSlots.push_back(*slot);
  }
  llvm::SmallVector<uint32_t> scratchSlots;
  for (const GpuScratchBuffer &scratch : binary.scratch)
    scratchSlots.push_back(addSlot(scratch.bytes, KE_SLOT_TEMP));

  // The group's device code, once per group.
  // Binary images as they are; PTX (the image or the assembly kept beside
  // a binary) NUL-terminated, as the driver reads it.
  bool isBinary = binary.format == "cubin" || binary.format == "hsaco";
  images.push_back({0, 0,
                    uint32_t(binary.format == "hsaco"   ? KE_IMAGE_HSACO
                             : binary.format == "cubin" ? KE_IMAGE_CUBIN
                                                        : KE_IMAGE_PTX),
                    0});
  std::string image = isBinary || binary.assembly.empty() ? binary.image
                                                          : binary.assembly;
  if (!isBinary)
    image.push_back('\0');
  imageBytes.push_back(std::move(image));
  uint32_t imageIndex = images.size() - 1;

  for (const GpuLaunch &launch : binary.launches) {
    ke_model_launch record{};
    record.image = imageIndex;
    for (unsigned d = 0; d < 3; ++d) {
      record.grid[d] = launch.grid[d];
      record.block[d] = launch.block[d];
    }
    record.dynamic_shared_memory_bytes = launch.dynamicSharedMemoryBytes;
    record.first_arg = args.size();
    record.num_args = launch.arguments.size();
    for (const GpuLaunchArgument &argument : launch.arguments) {
      ke_model_arg out{KE_ARG_I64, 0, uint64_t(argument.value)};
      switch (argument.kind) {
      case GpuLaunchArgument::Kind::BufferField:
      case GpuLaunchArgument::Kind::ScratchField: {
        bool isScratch =
            argument.kind == GpuLaunchArgument::Kind::ScratchField;
        if (argument.buffer >=
            (isScratch ? scratchSlots.size() : argumentSlots.size()))
          return group.ops.back()->emitError(
              "ke: a launch names a buffer the kernel does not have");
        ArrayRef<int64_t> shape =
            isScratch ? ArrayRef<int64_t>(binary.scratch[argument.buffer].shape)
                      : ArrayRef<int64_t>(kernel.arguments[argument.buffer].shape);
        size_t rank = shape.size();
        unsigned field = argument.field;
        // The fields of a memref descriptor, as the runner passes them
        // (ke/Runtime/LaunchParameters.h): pointers, offset, sizes,
        // row-major strides.
        if (field < 2) {
          out.kind = KE_ARG_POINTER;
          out.slot = isScratch ? scratchSlots[argument.buffer]
                               : argumentSlots[argument.buffer];
          out.value = 0;
        } else if (field == 2) {
          out.value = 0;
        } else if (field < 3 + rank) {
          out.value = uint64_t(shape[field - 3]);
        } else if (field < 3 + 2 * rank) {
          int64_t stride = 1;
          for (size_t d = field - 3 - rank + 1; d < rank; ++d)
            stride *= shape[d];
          out.value = uint64_t(stride);
        } else {
          return group.ops.back()->emitError(
                     "ke: a launch names a descriptor field the buffer does "
                     "not have (field ")
                 << field << " of " << (isScratch ? "scratch" : "argument")
                 << " buffer " << argument.buffer << " of rank " << rank
                 << ", kernel " << launch.kernelName << ")";
        }
        break;
      }
      case GpuLaunchArgument::Kind::TensorMap: {
        if (argument.buffer >= binary.tensorMaps.size())
          return group.ops.back()->emitError(
              "ke: a launch names a tensor map the kernel does not have");
        const GpuTensorMap &map = binary.tensorMaps[argument.buffer];
        if (map.buffer >= (map.scratch ? scratchSlots.size()
                                       : argumentSlots.size()) ||
            map.shape.size() > 5 || map.box.size() != map.shape.size())
          return group.ops.back()->emitError(
              "ke: a tensor map names a buffer the kernel does not have");
        ke_model_tensor_map record{};
        record.data_type = map.dataType;
        record.element_bytes = map.elementBytes;
        record.rank = map.shape.size();
        record.swizzle_bytes = map.swizzleBytes;
        llvm::copy(map.shape, record.shape);
        llvm::copy(map.box, record.box);
        tensorMaps.push_back(record);
        out.kind = KE_ARG_TENSOR_MAP;
        out.slot = map.scratch ? scratchSlots[map.buffer]
                               : argumentSlots[map.buffer];
        out.value = tensorMaps.size() - 1;
        break;
      }
      case GpuLaunchArgument::Kind::Index:
        out.kind = KE_ARG_I64;
        break;
      case GpuLaunchArgument::Kind::F64:
        out.kind = KE_ARG_F64;
        break;
      case GpuLaunchArgument::Kind::F32:
        out.kind = KE_ARG_F32;
        break;
      case GpuLaunchArgument::Kind::I32:
        out.kind = KE_ARG_I32;
        break;
      }
      args.push_back(out);
    }
    kernelNames.push_back(launch.kernelName);
    launches.push_back(record);
    steps.push_back({KE_STEP_LAUNCH, uint32_t(launches.size() - 1), 0, 0, 0});
  }
  // The group's results are its written buffers.
  for (auto [result, argument] : kernel.resultArguments)
    slotOfValue[result] = argumentSlots[argument];
  return success();
}

LogicalResult PlanBuilder::addReturn(func::ReturnOp op) {
  llvm::DenseMap<uint32_t, unsigned> handedOut;
  for (auto [index, value] : llvm::enumerate(op.getOperands())) {
    FailureOr<uint32_t> slot = slotOf(value, op);
    if (failed(slot))
      return failure();
    auto type = cast<RankedTensorType>(value.getType());
    // A temporary becomes the caller's output buffer (no copy); inputs,
    // constants and a temporary returned twice are copied.
    if (slots[*slot].kind == KE_SLOT_TEMP && !handedOut.count(*slot)) {
      slots[*slot].kind = KE_SLOT_OUTPUT;
      slots[*slot].index = index;
      handedOut[*slot] = index;
      continue;
    }
    uint32_t output = addSlot(getTensorBytes(type), KE_SLOT_OUTPUT, index);
    addCopy(output, *slot, getTensorBytes(type));
  }
  return success();
}

FailureOr<uint32_t> PlanBuilder::writableSlotFor(Value value, Operation *user,
                                                 bool keep) {
  FailureOr<uint32_t> slot = slotOf(value, user);
  if (failed(slot))
    return failure();
  if (writableInPlace.erase(value))
    return *slot;
  auto type = cast<RankedTensorType>(value.getType());
  uint32_t temp = addTemp(type);
  if (keep)
    addCopy(temp, *slot, getTensorBytes(type));
  return temp;
}

LogicalResult PlanBuilder::addSliceCopy(Operation *op, uint32_t dst,
                                        ArrayRef<int64_t> dstShape,
                                        ArrayRef<int64_t> dstOffsets,
                                        uint32_t src,
                                        ArrayRef<int64_t> srcShape,
                                        ArrayRef<int64_t> srcOffsets,
                                        ArrayRef<int64_t> sizes,
                                        unsigned elementBytes) {
  auto rowMajor = [](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> strides(shape.size(), 1);
    for (int i = int(shape.size()) - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * shape[i + 1];
    return strides;
  };
  SmallVector<int64_t> srcStrides = rowMajor(srcShape);
  SmallVector<int64_t> dstStrides = rowMajor(dstShape);
  uint64_t srcOffset = 0, dstOffset = 0;
  for (auto [offset, stride] : llvm::zip(srcOffsets, srcStrides))
    srcOffset += uint64_t(offset * stride) * elementBytes;
  for (auto [offset, stride] : llvm::zip(dstOffsets, dstStrides))
    dstOffset += uint64_t(offset * stride) * elementBytes;
  // The box's dimensions, outermost first, as (count, source stride,
  // destination stride) in bytes; unit dimensions dropped and neighbours
  // that are contiguous on both sides merged.
  struct Dim {
    int64_t count, src, dst;
  };
  SmallVector<Dim> dims;
  for (auto [size, s, d] : llvm::zip(sizes, srcStrides, dstStrides))
    if (size != 1)
      dims.push_back({size, s * elementBytes, d * elementBytes});
  for (int i = int(dims.size()) - 2; i >= 0; --i) {
    Dim &outer = dims[i], &inner = dims[i + 1];
    if (outer.src == inner.count * inner.src &&
        outer.dst == inner.count * inner.dst) {
      inner.count *= outer.count;
      dims.erase(dims.begin() + i);
    }
  }
  // The contiguous run of bytes: the innermost dimension when both sides
  // are dense in it, else one element.
  uint64_t width = elementBytes;
  if (!dims.empty() && dims.back().src == int64_t(elementBytes) &&
      dims.back().dst == int64_t(elementBytes)) {
    width = dims.back().count * elementBytes;
    dims.pop_back();
  }
  // Up to two more dimensions per box (rows, then slices whose pitch is a
  // whole number of rows on both sides); any others repeat the box.
  ke_model_box box{};
  box.dst_slot = dst;
  box.src_slot = src;
  box.width = width;
  box.height = box.depth = 1;
  box.dst_pitch = box.src_pitch = width;
  box.dst_rows = box.src_rows = 1;
  if (!dims.empty()) {
    Dim rows = dims.pop_back_val();
    box.height = rows.count;
    box.src_pitch = rows.src;
    box.dst_pitch = rows.dst;
    box.src_rows = box.dst_rows = rows.count;
    if (!dims.empty() && dims.back().src % rows.src == 0 &&
        dims.back().dst % rows.dst == 0 &&
        dims.back().src / rows.src >= rows.count &&
        dims.back().dst / rows.dst >= rows.count) {
      Dim slices = dims.pop_back_val();
      box.depth = slices.count;
      box.src_rows = slices.src / rows.src;
      box.dst_rows = slices.dst / rows.dst;
    }
  }
  int64_t repeats = 1;
  for (const Dim &dim : dims)
    repeats *= dim.count;
  if (repeats > 4096)
    return op->emitError("ke: this copy needs ")
           << repeats << " box copies on the GPU; at most 4096 are planned";
  for (int64_t index = 0; index < repeats; ++index) {
    ke_model_box copy = box;
    copy.src_offset = srcOffset;
    copy.dst_offset = dstOffset;
    int64_t rest = index;
    for (int i = int(dims.size()) - 1; i >= 0; --i) {
      int64_t position = rest % dims[i].count;
      rest /= dims[i].count;
      copy.src_offset += uint64_t(position * dims[i].src);
      copy.dst_offset += uint64_t(position * dims[i].dst);
    }
    boxes.push_back(copy);
    steps.push_back({KE_STEP_BOX, uint32_t(boxes.size() - 1), 0, 0, 0});
  }
  return success();
}

/// Bytes per element of `type`'s elements.
static unsigned getElementBytes(ShapedType type) {
  return std::max(1u, (type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

LogicalResult PlanBuilder::addExtractSlice(tensor::ExtractSliceOp op) {
  if (!op.hasUnitStride() || !op.getSourceType().hasStaticShape() ||
      !op.getType().hasStaticShape() ||
      ShapedType::isDynamicShape(op.getStaticOffsets()) ||
      ShapedType::isDynamicShape(op.getStaticSizes()))
    return op.emitError("ke: a GPU model copies slices of static offsets, "
                        "sizes and unit strides only");
  FailureOr<uint32_t> source = slotOf(op.getSource(), op);
  if (failed(source))
    return failure();
  uint32_t result = addTemp(op.getType());
  SmallVector<int64_t> zeros(op.getStaticSizes().size(), 0);
  if (failed(addSliceCopy(op, result, op.getStaticSizes(), zeros, *source,
                          op.getSourceType().getShape(),
                          op.getStaticOffsets(), op.getStaticSizes(),
                          getElementBytes(op.getType()))))
    return failure();
  slotOfValue[op.getResult()] = result;
  return success();
}

LogicalResult PlanBuilder::addInsertSlice(tensor::InsertSliceOp op) {
  if (!op.hasUnitStride() || !op.getDestType().hasStaticShape() ||
      !op.getSourceType().hasStaticShape() ||
      ShapedType::isDynamicShape(op.getStaticOffsets()) ||
      ShapedType::isDynamicShape(op.getStaticSizes()))
    return op.emitError("ke: a GPU model copies slices of static offsets, "
                        "sizes and unit strides only");
  FailureOr<uint32_t> source = slotOf(op.getSource(), op);
  if (failed(source))
    return failure();
  FailureOr<uint32_t> result =
      writableSlotFor(op.getDest(), op, /*keep=*/true);
  if (failed(result))
    return failure();
  SmallVector<int64_t> zeros(op.getStaticSizes().size(), 0);
  if (failed(addSliceCopy(op, *result, op.getDestType().getShape(),
                          op.getStaticOffsets(), *source,
                          op.getStaticSizes(), zeros, op.getStaticSizes(),
                          getElementBytes(op.getDestType()))))
    return failure();
  slotOfValue[op.getResult()] = *result;
  return success();
}

LogicalResult PlanBuilder::addConcat(tensor::ConcatOp op) {
  RankedTensorType type = op.getResultType();
  if (!type.hasStaticShape() ||
      llvm::any_of(op.getInputs(), [](Value input) {
        return !cast<RankedTensorType>(input.getType()).hasStaticShape();
      }))
    return op.emitError("ke: a GPU model concatenates static shapes only");
  uint32_t result = addTemp(type);
  SmallVector<int64_t> offsets(type.getRank(), 0);
  uint64_t dim = op.getDim();
  for (Value input : op.getInputs()) {
    FailureOr<uint32_t> source = slotOf(input, op);
    if (failed(source))
      return failure();
    ArrayRef<int64_t> shape = cast<RankedTensorType>(input.getType()).getShape();
    SmallVector<int64_t> zeros(shape.size(), 0);
    if (failed(addSliceCopy(op, result, type.getShape(), offsets, *source,
                            shape, zeros, shape, getElementBytes(type))))
      return failure();
    offsets[dim] += shape[dim];
  }
  slotOfValue[op.getResult()] = result;
  return success();
}

LogicalResult PlanBuilder::addPad(tensor::PadOp op) {
  RankedTensorType type = op.getResultType();
  if (!type.hasStaticShape() || !op.getSourceType().hasStaticShape() ||
      ShapedType::isDynamicShape(op.getStaticLow()))
    return op.emitError("ke: a GPU model pads by static amounts only");
  // The padding value, as the bytes a fill repeats.
  Attribute value;
  Value padding = op.getConstantPaddingValue();
  if (!padding || !matchPattern(padding, m_Constant(&value)))
    return op.emitError("ke: a GPU model pads with a constant only");
  APInt bits;
  if (auto f = dyn_cast<FloatAttr>(value))
    bits = f.getValue().bitcastToAPInt();
  else if (auto i = dyn_cast<IntegerAttr>(value))
    bits = i.getValue();
  else
    return op.emitError("ke: cannot read this padding value");
  unsigned width = bits.getBitWidth();
  if (width == 64 && bits.isZero())
    width = 8, bits = APInt(8, 0);
  if (width != 8 && width != 16 && width != 32)
    return op.emitError("ke: a GPU model pads with 8, 16 or 32-bit values "
                        "(or 64-bit zero) only");
  FailureOr<uint32_t> source = slotOf(op.getSource(), op);
  if (failed(source))
    return failure();
  uint32_t result = addTemp(type);
  ke_model_step fill{KE_STEP_FILL, result, uint32_t(bits.getZExtValue()),
                     width / 8, getTensorBytes(type)};
  steps.push_back(fill);
  SmallVector<int64_t> zeros(type.getRank(), 0);
  if (failed(addSliceCopy(op, result, type.getShape(), op.getStaticLow(),
                          *source, op.getSourceType().getShape(), zeros,
                          op.getSourceType().getShape(),
                          getElementBytes(type))))
    return failure();
  slotOfValue[op.getResult()] = result;
  return success();
}

LogicalResult PlanBuilder::build() {
  if (!func.getBody().hasOneBlock())
    return func.emitError("ke: a GPU model's function must have one block");
  for (auto [index, arg] : llvm::enumerate(func.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape())
      return func.emitError("ke: argument #")
             << index << " of a GPU model must be a tensor of static shape";
    slotOfValue[arg] = addSlot(getTensorBytes(type), KE_SLOT_INPUT, index);
  }
  for (Type type : func.getResultTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return func.emitError(
          "ke: the results of a GPU model must be tensors of static shape");
  }
  // Each group launches where its last op stands.
  llvm::DenseMap<Operation *, const PlannedGroup *> lastOpOf;
  llvm::DenseMap<Operation *, const PlannedGroup *> groupOf;
  for (const PlannedGroup &group : groups) {
    lastOpOf[group.ops.back()] = &group;
    for (Operation *op : group.ops)
      groupOf[op] = &group;
  }
  for (Operation &op : func.getBody().front()) {
    if (const PlannedGroup *group = groupOf.lookup(&op)) {
      if (lastOpOf.lookup(&op) == group && failed(launchGroup(*group)))
        return failure();
      continue;
    }
    if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
      if (!empty.getType().hasStaticShape())
        return empty.emitError("ke: a GPU model needs static shapes");
      slotOfValue[empty] = addTemp(empty.getType());
      if (empty->hasOneUse())
        writableInPlace.insert(empty);
      continue;
    }
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(
            op)) {
      FailureOr<uint32_t> slot = slotOf(op.getOperand(0), &op);
      if (failed(slot))
        return failure();
      slotOfValue[op.getResult(0)] = *slot;
      continue;
    }
    // The glue ops with buffers of their own: std::nullopt for the others.
    std::optional<LogicalResult> glue =
        llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(&op)
            .Case([&](func::ReturnOp ret) { return addReturn(ret); })
            .Case([&](tensor::ExtractSliceOp slice) {
              return addExtractSlice(slice);
            })
            .Case([&](tensor::InsertSliceOp insert) {
              return addInsertSlice(insert);
            })
            .Case([&](tensor::PadOp pad) { return addPad(pad); })
            .Case([&](tensor::ConcatOp concat) { return addConcat(concat); })
            .Default([](Operation *) { return std::nullopt; });
    if (glue) {
      if (failed(*glue))
        return failure();
      continue;
    }
    Attribute value;
    if (op.getNumResults() == 1 && matchPattern(op.getResult(0), m_Constant(&value))) {
      if (auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType())) {
        if (failed(addConstant(&op, value, type)))
          return failure();
      }
      continue; // scalars travel inside the kernels that use them
    }
    bool touchesTensors = llvm::any_of(
        llvm::concat<Type>(op.getOperandTypes(), op.getResultTypes()),
        [](Type type) { return isa<ShapedType>(type); });
    if (touchesTensors || !isPure(&op))
      return op.emitError("ke: ")
             << op.getName()
             << " has no GPU lowering outside a kernel group yet; a model "
                "compiled for a GPU may hold only kernel groups, "
                "tensor.empty, reshapes, slices, pads, concatenations, "
                "constants and its return";
  }
  return success();
}

LogicalResult PlanBuilder::placeTemporaries() {
  // Live ranges in step order, through every slot a step names.
  std::vector<int64_t> first(slots.size(), -1), last(slots.size(), -1);
  auto use = [&](uint32_t slot, int64_t step) {
    if (first[slot] < 0)
      first[slot] = step;
    last[slot] = step;
  };
  for (auto [index, step] : llvm::enumerate(steps)) {
    int64_t at = index;
    switch (step.op) {
    case KE_STEP_LAUNCH: {
      const ke_model_launch &launch = launches[step.a];
      for (uint32_t i = 0; i < launch.num_args; ++i)
        if (args[launch.first_arg + i].kind == KE_ARG_POINTER ||
            args[launch.first_arg + i].kind == KE_ARG_TENSOR_MAP)
          use(args[launch.first_arg + i].slot, at);
      break;
    }
    case KE_STEP_COPY:
      use(step.a, at);
      use(step.b, at);
      break;
    case KE_STEP_BOX:
      use(boxes[step.a].dst_slot, at);
      use(boxes[step.a].src_slot, at);
      break;
    case KE_STEP_FILL:
      use(step.a, at);
      break;
    }
  }
  // Greedy by size (the largest first), each at the lowest aligned offset
  // clear of the temporaries already placed whose live ranges overlap its
  // own.
  SmallVector<uint32_t> temps;
  for (auto [index, slot] : llvm::enumerate(slots))
    if (slot.kind == KE_SLOT_TEMP)
      temps.push_back(index);
  llvm::stable_sort(temps, [&](uint32_t a, uint32_t b) {
    return slots[a].bytes > slots[b].bytes;
  });
  struct Placed {
    uint64_t offset, end;
    int64_t first, last;
  };
  SmallVector<Placed> placed;
  for (uint32_t temp : temps) {
    SmallVector<std::pair<uint64_t, uint64_t>> busy;
    for (const Placed &other : placed)
      if (first[temp] <= other.last && other.first <= last[temp])
        busy.push_back({other.offset, other.end});
    llvm::sort(busy);
    uint64_t offset = 0, bytes = std::max<uint64_t>(slots[temp].bytes, 1);
    for (auto [start, end] : busy) {
      if (offset + bytes <= start)
        break;
      offset = std::max(offset, llvm::alignTo(end, KE_MODEL_TEMP_ALIGNMENT));
    }
    if (offset / KE_MODEL_TEMP_ALIGNMENT > UINT32_MAX)
      return func.emitError("ke: a GPU model's temporaries exceed ")
             << uint64_t(UINT32_MAX) * KE_MODEL_TEMP_ALIGNMENT << " bytes";
    slots[temp].index = offset / KE_MODEL_TEMP_ALIGNMENT;
    placed.push_back({offset, offset + bytes, first[temp], last[temp]});
    temporaryBytes = std::max(temporaryBytes, offset + bytes);
  }
  return success();
}

std::string PlanBuilder::writeBlob(const TargetDescription &target,
                                   StringRef pipelineHash) {
  BlobWriter writer;
  ke_model_header header{};
  header.magic = KE_MODEL_MAGIC;
  header.version = KE_MODEL_FORMAT_VERSION;
  header.num_inputs = func.getNumArguments();
  header.num_outputs = func.getNumResults();
  // Data first, so that the records can point at it.
  for (auto [record, bytes] : llvm::zip(images, imageBytes)) {
    record.data = writer.addBytes(bytes.data(), bytes.size());
    record.size = bytes.size();
  }
  for (auto [record, bytes] : llvm::zip(constants, constantBytes))
    record.data = writer.addBytes(bytes.data(), bytes.size());
  for (auto [record, name] : llvm::zip(launches, kernelNames))
    record.kernel_name = writer.addString(name);
  auto describe = [](TypeRange types) {
    llvm::json::Array list;
    for (Type type : types) {
      auto tensor = cast<RankedTensorType>(type);
      list.push_back(llvm::json::Object{
          {"shape", llvm::json::Array(tensor.getShape())},
          {"dtype", getDtypeName(tensor.getElementType())}});
    }
    return list;
  };
  llvm::json::Object signature{
      {"name", func.getSymName()},
      {"target", target.name},
      {"pipeline_hash", pipelineHash},
      {"inputs", describe(func.getArgumentTypes())},
      {"outputs", describe(func.getResultTypes())},
      {"temporary_bytes", int64_t(temporaryBytes)}};
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(std::move(signature));
  header.signature = writer.addString(text);
  header.num_slots = slots.size();
  header.slots = writer.addArray(ArrayRef(slots));
  header.num_images = images.size();
  header.images = writer.addArray(ArrayRef(images));
  header.num_launches = launches.size();
  header.launches = writer.addArray(ArrayRef(launches));
  header.num_args = args.size();
  header.args = writer.addArray(ArrayRef(args));
  header.num_steps = steps.size();
  header.steps = writer.addArray(ArrayRef(steps));
  header.num_constants = constants.size();
  header.constants = writer.addArray(ArrayRef(constants));
  header.num_boxes = boxes.size();
  header.boxes = writer.addArray(ArrayRef(boxes));
  header.num_tensor_maps = tensorMaps.size();
  header.tensor_maps = writer.addArray(ArrayRef(tensorMaps));
  return writer.finish(header);
}

} // namespace

FailureOr<std::string> ke::buildModelBlob(func::FuncOp func,
                                          ArrayRef<PlannedGroup> groups,
                                          const TargetDescription &target,
                                          StringRef pipelineHash) {
  PlanBuilder builder(func, groups);
  if (failed(builder.build()) || failed(builder.placeTemporaries()))
    return failure();
  return builder.writeBlob(target, pipelineHash);
}

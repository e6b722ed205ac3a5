//===- Kernel.cpp - A workload as a standalone, callable function ---------===//

#include "ke/Workload/Kernel.h"
#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"

using namespace mlir;
using namespace ke;

int64_t KernelArgument::numElements() const {
  int64_t n = 1;
  for (int64_t dim : shape)
    n *= dim;
  return n;
}

namespace {


bool hasF32Elements(Type type) { return getElementTypeOrSelf(type).isF32(); }

/// (d0, ..., dn-1) -> (d0, ..., dn-2): how a row's result is read.
AffineMap getRowMap(unsigned rank, MLIRContext *context) {
  return AffineMap::getMultiDimIdentityMap(rank, context)
      .getMajorSubMap(rank - 1);
}

/// Whether `op` qualifies as a row reduction over `ranges` (see
/// getRowReductions) in `block`.
bool isRowReduction(linalg::LinalgOp op, ArrayRef<int64_t> ranges,
                    Block *block) {
  unsigned rank = ranges.size();
  if (op->getBlock() != block || !op.hasPureTensorSemantics() ||
      op.getNumLoops() != rank || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || op.getStaticLoopRanges() != ranges ||
      !llvm::all_of(op->getOperandTypes(), hasF32Elements))
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned loop = 0; loop + 1 < rank; ++loop)
    if (iterators[loop] != utils::IteratorType::parallel)
      return false;
  if (iterators.back() != utils::IteratorType::reduction ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return false;
  OpOperand *init = op.getDpsInitOperand(0);
  if (op.getMatchingIndexingMap(init) != getRowMap(rank, op->getContext()))
    return false;
  auto fill = init->get().getDefiningOp<linalg::FillOp>();
  return fill && fill->getBlock() == block && fill->getResult(0).hasOneUse();
}

} // namespace

Operation *ke::getReductionCombiner(Operation *anchor) {
  auto op = dyn_cast<linalg::LinalgOp>(anchor);
  if (!op)
    return nullptr;
  Block *body = op.getBlock();
  if (!body || body->getNumArguments() == 0)
    return nullptr;
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield->getNumOperands() != 1)
    return nullptr;
  Operation *combiner = yield->getOperand(0).getDefiningOp();
  BlockArgument acc = body->getArguments().back();
  if (!combiner || combiner->getBlock() != body || !acc.hasOneUse() ||
      combiner->getNumOperands() != 2 ||
      !isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp, arith::AddIOp, arith::MulIOp,
           arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp,
           arith::AndIOp, arith::OrIOp, arith::XOrIOp>(combiner))
    return nullptr;
  // `acc` has one use, so the other operand cannot depend on it.
  if (!llvm::is_contained(combiner->getOperands(), Value(acc)))
    return nullptr;
  return combiner;
}

SmallVector<Operation *> ke::getRowReductions(Operation *anchor) {
  auto elementwise = dyn_cast<linalg::LinalgOp>(anchor);
  if (!elementwise || !linalg::isElementwise(elementwise) ||
      !elementwise.hasPureTensorSemantics() || anchor->getNumResults() != 1 ||
      elementwise.getNumLoops() < 2 ||
      !llvm::all_of(anchor->getOperandTypes(), hasF32Elements))
    return {};
  SmallVector<int64_t> ranges = elementwise.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return {};
  // Other rows take ke-gpu-row-norm's kernel, which evaluates the bodies
  // itself: float combiners, operands read through projected permutations.
  bool builtKernel = ranges.back() % kTiledRowMultiple != 0;
  if (builtKernel &&
      !llvm::all_of(elementwise.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return {};
  AffineMap rowMap = getRowMap(ranges.size(), anchor->getContext());
  llvm::SetVector<Operation *> found;
  SmallVector<linalg::LinalgOp> readers = {elementwise};
  while (!readers.empty()) {
    linalg::LinalgOp reader = readers.pop_back_val();
    for (OpOperand *operand : reader.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::LinalgOp>();
      if (!producer || producer.getNumReductionLoops() == 0 ||
          reader.getMatchingIndexingMap(operand) != rowMap)
        continue; // computed outside the kernel: an input like any other
      if (!isRowReduction(producer, ranges, anchor->getBlock()))
        return {};
      if (found.insert(producer))
        readers.push_back(producer);
    }
  }
  // Nothing outside the group may see a reduction's result: it only lives
  // in the kernel's shared memory.
  for (Operation *reduction : found)
    for (Operation *user : reduction->getResult(0).getUsers())
      if (user != anchor && !found.contains(user))
        return {};
  if (builtKernel && !llvm::all_of(found, [](Operation *reduction) {
        Operation *combiner =
            getReductionCombiner(reduction);
        return combiner && isa<FloatType>(combiner->getResult(0).getType());
      }))
    return {};
  SmallVector<Operation *> reductions(found.begin(), found.end());
  llvm::sort(reductions,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return reductions;
}

namespace {

/// The fills among the group that produce `op`'s inits, appended to
/// `group` unless already there.
void addInitFills(linalg::LinalgOp op, SmallVectorImpl<Operation *> &group) {
  for (Value init : op.getDpsInits())
    if (auto fill = init.getDefiningOp<linalg::FillOp>();
        fill && !llvm::is_contained(group, fill.getOperation()))
      group.push_back(fill);
}

} // namespace

SmallVector<Operation *> ke::getKernelGroup(Operation *anchor,
                                            KernelFusion fusion) {
  SmallVector<Operation *> group;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(anchor);
  bool onTensors = llvm::all_of(anchor->getOperandTypes(), [](Type type) {
    return !isa<MemRefType>(type);
  });
  if (fusion == KernelFusion::None || !onTensors || !linalgOp) {
    group.push_back(anchor);
    return group;
  }
  if (fusesRowReductions(fusion)) {
    SmallVector<Operation *> reductions = getRowReductions(anchor);
    if (!reductions.empty()) {
      for (Operation *reduction : reductions) {
        addInitFills(cast<linalg::LinalgOp>(reduction), group);
        group.push_back(reduction);
      }
      addInitFills(linalgOp, group);
      group.push_back(anchor);
      llvm::sort(group, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      return group;
    }
  }
  addInitFills(linalgOp, group);
  group.push_back(anchor);
  if (anchor->getNumResults() != 1 || !anchor->getResult(0).hasOneUse())
    return group;
  OpOperand &use = *anchor->getResult(0).getUses().begin();
  auto consumer = dyn_cast<linalg::LinalgOp>(use.getOwner());
  // The consumer reads the anchor's result as it is, or, for convolutions,
  // through a permutation: a channels-first model's tail reads the
  // channels-last convolution that ke-convs-to-channels-last made (the
  // rules tile it with mapToConsumer).
  AffineMap useMap = consumer ? consumer.getMatchingIndexingMap(&use)
                              : AffineMap();
  bool readable =
      consumer && (useMap.isIdentity() ||
                   (useMap.isPermutation() &&
                    classifyWorkload(linalgOp) == WorkloadKind::Convolution));
  // A fill that a consumer takes as its init is in the consumer's group
  // (addInitFills), not the other way round: each would hold the other, and
  // neither would be compiled.
  if (consumer && isa<linalg::FillOp>(anchor) && consumer.isDpsInit(&use))
    return group;
  if (!consumer || !linalg::isElementwise(consumer) ||
      consumer->getNumResults() != 1 ||
      consumer->getBlock() != anchor->getBlock() || !readable ||
      !linalgOp.getIndexingMapMatchingResult(anchor->getResult(0))
           .isProjectedPermutation())
    return group;
  // Everything else the consumer reads must be available at the anchor, so
  // that the group can be cloned as one unit.
  for (Value operand : consumer->getOperands())
    if (Operation *def = operand.getDefiningOp();
        def && def != anchor && def->getBlock() == anchor->getBlock() &&
        anchor->isBeforeInBlock(def))
      return group;
  group.push_back(consumer);
  return group;
}

namespace {

/// The anchor, other than `op`, whose group holds `op` directly.
Operation *getDirectFusingAnchor(Operation *op, KernelFusion fusion) {
  auto holds = [&](Operation *anchor) {
    return anchor && anchor != op && isWorkloadAnchor(anchor) &&
           llvm::is_contained(getKernelGroup(anchor, fusion), op);
  };
  for (Operation *user : op->getUsers())
    if (holds(user))
      return user;
  for (Value operand : op->getOperands())
    if (Operation *producer = operand.getDefiningOp(); holds(producer))
      return producer;
  return nullptr;
}

} // namespace

Operation *ke::getFusingAnchor(Operation *op, KernelFusion fusion) {
  // A fill belongs to a row reduction that belongs to an elementwise
  // anchor: follow the chain (a few steps; bounded in case two groups ever
  // held each other).
  Operation *anchor = getDirectFusingAnchor(op, fusion);
  for (unsigned step = 0; anchor && step < 4; ++step) {
    Operation *outer = getDirectFusingAnchor(anchor, fusion);
    if (!outer || outer == op)
      break;
    anchor = outer;
  }
  return anchor;
}

Operation *ke::getFirstGroupAnchor(Operation *op, StringRef key,
                                   KernelFusion fusion) {
  if (!getFusingAnchor(op, fusion))
    return op;
  Operation *found = nullptr;
  Operation *root = op->getParentOfType<ModuleOp>();
  if (!root)
    return nullptr;
  root->walk([&](Operation *candidate) {
    if (isWorkloadAnchor(candidate) && !getFusingAnchor(candidate, fusion) &&
        computeWorkloadKey(candidate) == key) {
      found = candidate;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

FailureOr<KernelModule> ke::buildKernelModule(Operation *anchor,
                                              KernelFusion fusion) {
  MLIRContext *context = anchor->getContext();
  context->loadDialect<func::FuncDialect, bufferization::BufferizationDialect,
                       linalg::LinalgDialect>();
  if (!isa<DestinationStyleOpInterface>(anchor) || !isWorkloadAnchor(anchor))
    return anchor->emitError("not a workload anchor");
  SmallVector<Operation *> group = getKernelGroup(anchor, fusion);
  llvm::SmallPtrSet<Operation *, 4> inGroup(group.begin(), group.end());

  // The values the group takes from outside, in order of first use; the
  // results the group gives back (those of its ops that no group op uses).
  llvm::SetVector<Value> external;
  llvm::SetVector<Value> captured; // scalars and values used inside bodies
  // The tensor.empty destinations of row reductions' fills travel with the
  // group: the reductions' results never leave the kernel, so a buffer
  // argument would only be scratch whose (undefined) contents a schedule
  // might copy in before the fill.
  // On GPUs (row fusion), the same holds for the accumulator of an anchor
  // whose result only the group's consumer reads: the schedule fuses the
  // anchor into the consumer's tiles, so its accumulator only ever exists
  // tile by tile (registers), and a buffer argument for it would make
  // bufferization copy each tile in from global memory.
  bool anchorResultStaysInside =
      fusion == KernelFusion::RowReductionsInternalAccumulators &&
      llvm::all_of(anchor->getUsers(),
                   [&](Operation *user) { return inGroup.contains(user); }) &&
      !anchor->use_empty();
  llvm::SmallPtrSet<Value, 4> internalEmpties;
  for (Operation *op : group)
    if (auto fill = dyn_cast<linalg::FillOp>(op))
      if (fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() &&
          llvm::all_of(fill->getUsers(), [&](Operation *user) {
            if (user == anchor) // not when another op writes the empty too
              return anchorResultStaysInside &&
                     fill.getOutputs()[0].hasOneUse();
            return inGroup.contains(user) && user->isBeforeInBlock(anchor);
          }))
        internalEmpties.insert(fill.getOutputs()[0]);
  for (Operation *op : group) {
    for (Value operand : op->getOperands()) {
      if (inGroup.contains(operand.getDefiningOp()))
        continue;
      if (internalEmpties.contains(operand)) {
        captured.insert(operand);
        continue;
      }
      if (auto shaped = dyn_cast<ShapedType>(operand.getType())) {
        if (!shaped.hasStaticShape())
          return anchor->emitError("operand of shape ")
                 << shaped << " is dynamic; kernels need static shapes";
        external.insert(operand);
      } else {
        captured.insert(operand);
      }
    }
    getUsedValuesDefinedAbove(op->getRegions(), captured);
  }
  // Tensors that a body reads with tensor.extract (torch-mlir's gathers,
  // such as ConvTranspose's flip of the weight) are buffers the kernel
  // receives, like operands; only constants travel with the kernel.
  SmallVector<Value> bodyTensors;
  for (Value value : captured)
    if (isa<RankedTensorType>(value.getType()) &&
        !internalEmpties.contains(value) && !matchPattern(value, m_Constant()))
      bodyTensors.push_back(value);
  for (Value value : bodyTensors) {
    if (!cast<ShapedType>(value.getType()).hasStaticShape())
      return anchor->emitError("a body reads a tensor of shape ")
             << value.getType() << ", which is dynamic; kernels need static "
                                   "shapes";
    captured.remove(value);
    external.insert(value);
  }
  SmallVector<OpResult> results;
  for (Operation *op : group)
    for (OpResult result : op->getResults())
      if (llvm::none_of(result.getUsers(), [&](Operation *user) {
            return inGroup.contains(user);
          }))
        results.push_back(result);

  // Roles: a buffer is read when an op reads its initial contents (an input,
  // or an init whose value the body uses); it is a result when a result of
  // the group is written into it; other inits are scratch.
  llvm::DenseSet<Value> read, inits, resultBuffers;
  for (Operation *op : group) {
    auto dps = cast<DestinationStyleOpInterface>(op);
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    for (OpOperand &operand : op->getOpOperands()) {
      if (!external.contains(operand.get()))
        continue;
      bool isInit = dps.isDpsInit(&operand);
      if (isInit)
        inits.insert(operand.get());
      if (!isInit || (linalgOp && linalgOp.payloadUsesValueFromOperand(&operand)))
        read.insert(operand.get());
    }
  }
  read.insert(bodyTensors.begin(), bodyTensors.end());
  // The buffer a result ends up in: its tied init, followed through the
  // group's fills (the anchor's init is usually a fill of a tensor.empty).
  auto resultBuffer = [&](OpResult result) -> Value {
    Value value = result;
    while (auto owner = dyn_cast_or_null<DestinationStyleOpInterface>(
               value.getDefiningOp())) {
      if (!inGroup.contains(owner))
        return value;
      value = owner.getTiedOpOperand(cast<OpResult>(value))->get();
    }
    return value;
  };
  for (OpResult result : results) {
    Value buffer = resultBuffer(result);
    if (!external.contains(buffer))
      return anchor->emitError("a result of the group is not written into a "
                               "buffer the kernel receives");
    resultBuffers.insert(buffer);
  }
  KernelModule kernel;
  kernel.argumentValues.assign(external.begin(), external.end());
  for (OpResult result : results)
    kernel.resultArguments.emplace_back(
        result, llvm::find(external, resultBuffer(result)) - external.begin());
  llvm::DenseMap<Value, BufferRole> roles;
  for (Value value : external) {
    bool isRead = read.contains(value);
    roles[value] = resultBuffers.contains(value)
                       ? (isRead ? BufferRole::Accumulator : BufferRole::Output)
                       : (isRead ? BufferRole::Input : BufferRole::Scratch);
  }

  SmallVector<Type> argTypes;
  for (Value value : external) {
    auto shaped = cast<ShapedType>(value.getType());
    KernelArgument arg;
    arg.shape.assign(shaped.getShape().begin(), shaped.getShape().end());
    arg.elementType = shaped.getElementType();
    arg.role = roles[value];
    kernel.arguments.push_back(arg);
    argTypes.push_back(MemRefType::get(arg.shape, arg.elementType));
  }

  OpBuilder builder(context);
  Location loc = anchor->getLoc();
  kernel.module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(kernel.module->getBody());
  auto func = func::FuncOp::create(builder, loc, kKernelFunctionName,
                                   builder.getFunctionType(argTypes, {}));
  func->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);

  IRMapping mapping;
  for (auto [index, value] : llvm::enumerate(external)) {
    Value arg = body->getArgument(index);
    if (auto tensorType = dyn_cast<RankedTensorType>(value.getType())) {
      bool writable = inits.contains(value);
      mapping.map(value, bufferization::ToTensorOp::create(
                             builder, loc, tensorType, arg, /*restrict=*/true,
                             writable)
                             .getResult());
    } else {
      mapping.map(value, arg);
    }
  }
  // Constants the group uses, as scalar operands or inside bodies, travel
  // with it.
  for (Value value : captured) {
    if (mapping.contains(value) || inGroup.contains(value.getDefiningOp()))
      continue;
    if (!matchPattern(value, m_Constant()) &&
        !internalEmpties.contains(value))
      return anchor->emitError("the op uses a scalar defined outside it that "
                               "is not a constant; kernels take buffers only");
    mapping.map(value, builder.clone(*value.getDefiningOp())->getResult(0));
  }

  for (Operation *op : group) {
    Operation *clone = builder.clone(*op, mapping);
    // Of the group's other ops, only the row reductions come before the
    // anchor (an elementwise consumer comes after it).
    bool isRowReduction = op != anchor && !isa<linalg::FillOp>(op) &&
                          op->isBeforeInBlock(anchor);
    clone->setAttr(op == anchor                ? kAnchorAttr
                   : isa<linalg::FillOp>(op) ? kProducerAttr
                   : isRowReduction          ? kRowReductionAttr
                                             : kConsumerAttr,
                   builder.getUnitAttr());
  }
  // Tensor results go back into the buffers of their inits.
  for (OpResult result : results) {
    if (!isa<RankedTensorType>(result.getType()))
      continue;
    unsigned index =
        llvm::find(external, resultBuffer(result)) - external.begin();
    bufferization::MaterializeInDestinationOp::create(
        builder, loc, /*result=*/Type(), mapping.lookup(result),
        body->getArgument(index), /*restrict=*/true, /*writable=*/true);
  }
  func::ReturnOp::create(builder, loc);
  return kernel;
}

Operation *ke::findKernelAnchor(ModuleOp module) {
  Operation *found = nullptr;
  module.walk([&](Operation *op) {
    if (op->hasAttr(kAnchorAttr)) {
      found = op;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

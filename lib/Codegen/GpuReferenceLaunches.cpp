//===- GpuReferenceLaunches.cpp - Plain loops, one thread per point -------===//
//
// ke-gpu-reference-launches (ke/Codegen/Passes.td), the mapping step of the
// device reference (ke/Codegen/GpuReference.h).
//
// Map of this file:
//   copiesToLinalg        memref.copy becomes linalg.copy (one path for all)
//   emitPoint             one iteration of a generic's body at given indices
//   launchGeneric         a generic as one launch: a thread per parallel
//                         point, its reduction loops inside the thread
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "GpuMemory.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#include <limits>

#define DEBUG_TYPE "ke-gpu-reference-launches"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_GPUREFERENCELAUNCHESPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// Threads per block of every reference launch.
constexpr int64_t kThreadsPerBlock = 256;

/// Rewrites the kernel function's memref.copy ops (bufferization writes
/// them for copies it could not avoid) as linalg.copy, so that every op left
/// to map is a linalg op.
void copiesToLinalg(func::FuncOp host) {
  SmallVector<memref::CopyOp> copies;
  for (Operation &op : host.getBody().front())
    if (auto copy = dyn_cast<memref::CopyOp>(op))
      copies.push_back(copy);
  for (memref::CopyOp copy : copies) {
    OpBuilder builder(copy);
    linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    copy.erase();
  }
}

/// The indices `map` gives for loop indices `ivs`.
SmallVector<Value> applyIndexingMap(OpBuilder &builder, Location loc,
                                    AffineMap map, ValueRange ivs) {
  SmallVector<Value> indices;
  for (unsigned result = 0; result < map.getNumResults(); ++result)
    indices.push_back(affine::AffineApplyOp::create(
        builder, loc, map.getSubMap({result}), ivs));
  return indices;
}

/// Whether `type` is a float narrower than f64 (what the accurate path
/// widens).
bool isNarrowFloat(Type type) {
  auto f = dyn_cast<FloatType>(type);
  return f && f.getWidth() < 64;
}

/// `value` converted to the float type `to` (extf or truncf); other values
/// and types are returned as they are.
Value castFloat(OpBuilder &builder, Location loc, Value value, Type to) {
  auto from = dyn_cast<FloatType>(value.getType());
  auto target = dyn_cast<FloatType>(to);
  if (!from || !target || from == target)
    return value;
  if (from.getWidth() < target.getWidth())
    return arith::ExtFOp::create(builder, loc, target, value);
  return arith::TruncFOp::create(builder, loc, target, value);
}

/// The arith ops the accurate path computes in f64: the rounding of their
/// f32 (f16, bf16) results is what a long accumulation accumulates.
bool computesInF64(Operation &op) {
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::RemFOp, arith::NegFOp, arith::MaximumFOp,
             arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp,
             arith::CmpFOp, arith::SelectOp, arith::SIToFPOp, arith::UIToFPOp,
             arith::FPToSIOp, arith::FPToUIOp>(op);
}

/// One iteration of `generic`'s body at loop indices `ivs`: its inputs
/// loaded, its outputs' current values `outs`; returns what it yields.
/// With `inF64` (the accurate path), float values are carried in f64: the
/// arithmetic of computesInF64 runs in f64, every other op (math functions,
/// truncf and extf: the body's own roundings) in its own types with casts
/// around it, and `outs` and the results are f64 where the outputs are
/// floats.
SmallVector<Value> emitPoint(OpBuilder &builder, Location loc,
                             linalg::GenericOp generic, ValueRange ivs,
                             ValueRange outs, bool inF64) {
  Type f64 = builder.getF64Type();
  auto widen = [&](Value value) {
    return inF64 && isNarrowFloat(value.getType())
               ? castFloat(builder, loc, value, f64)
               : value;
  };
  IRMapping mapping;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    Value value = input->get();
    BlockArgument argument = generic.getMatchingBlockArgument(input);
    if (!isa<MemRefType>(value.getType())) { // a scalar (a fill's value)
      mapping.map(argument, widen(value));
      continue;
    }
    if (argument.use_empty())
      continue;
    mapping.map(argument,
                widen(memref::LoadOp::create(
                    builder, loc, value,
                    applyIndexingMap(builder, loc,
                                     generic.getMatchingIndexingMap(input),
                                     ivs))));
  }
  for (auto [init, out] : llvm::zip(generic.getDpsInitsMutable(), outs))
    mapping.map(generic.getMatchingBlockArgument(&init), out);
  Block &body = generic.getRegion().front();
  for (Operation &op : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    if (!inF64) {
      builder.clone(op, mapping);
      continue;
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      if (auto value = dyn_cast<FloatAttr>(constant.getValue())) {
        mapping.map(constant.getResult(),
                    arith::ConstantOp::create(
                        builder, loc,
                        FloatAttr::get(f64, value.getValueAsDouble())));
        continue;
      }
    }
    bool wide = computesInF64(op);
    SmallVector<Value> operands;
    for (Value operand : op.getOperands()) {
      Value mapped = mapping.lookupOrDefault(operand);
      operands.push_back(wide ? widen(mapped)
                              : castFloat(builder, loc, mapped,
                                          operand.getType()));
    }
    SmallVector<Type> types;
    for (Type type : op.getResultTypes())
      types.push_back(wide && isNarrowFloat(type) ? f64 : type);
    OperationState state(op.getLoc(), op.getName(), operands, types,
                         op.getAttrs());
    Operation *clone = builder.create(state);
    for (auto [result, cloned] :
         llvm::zip(op.getResults(), clone->getResults()))
      mapping.map(result, widen(cloned));
  }
  SmallVector<Value> yielded;
  for (Value value : body.getTerminator()->getOperands())
    yielded.push_back(widen(mapping.lookupOrDefault(value)));
  return yielded;
}

/// Loads the current value of each output of `generic` at `ivs` (null for
/// outputs whose value the body does not read, unless `all`).
SmallVector<Value> loadOutputs(OpBuilder &builder, Location loc,
                               linalg::GenericOp generic, ValueRange ivs,
                               bool all) {
  SmallVector<Value> values;
  for (OpOperand &init : generic.getDpsInitsMutable()) {
    if (!all && generic.getMatchingBlockArgument(&init).use_empty()) {
      values.push_back(Value());
      continue;
    }
    values.push_back(memref::LoadOp::create(
        builder, loc, init.get(),
        applyIndexingMap(builder, loc, generic.getMatchingIndexingMap(&init),
                         ivs)));
  }
  return values;
}

/// Stores `values` into the outputs of `generic` at `ivs`, rounded to their
/// element types (the accurate path's f64 values).
void storeOutputs(OpBuilder &builder, Location loc, linalg::GenericOp generic,
                  ValueRange ivs, ValueRange values) {
  for (auto [init, value] : llvm::zip(generic.getDpsInitsMutable(), values))
    memref::StoreOp::create(
        builder, loc,
        castFloat(builder, loc, value,
                  cast<MemRefType>(init.get().getType()).getElementType()),
        init.get(),
        applyIndexingMap(builder, loc, generic.getMatchingIndexingMap(&init),
                         ivs));
}

/// Whether the outputs of `generic` can stay in registers, in f64, across
/// its reduction loops: their maps read no reduction loop (each thread owns
/// its elements), no input reads an output's buffer (a reduction that reads
/// what it writes must see each iteration's store), and its body has no op
/// with regions (emitPoint retypes ops one by one, not nested bodies).
bool canCarryOutputs(linalg::GenericOp generic,
                     ArrayRef<unsigned> reductionDims) {
  if (llvm::any_of(generic.getRegion().front(),
                   [](Operation &op) { return op.getNumRegions() != 0; }))
    return false;
  for (OpOperand &init : generic.getDpsInitsMutable()) {
    AffineMap map = generic.getMatchingIndexingMap(&init);
    for (unsigned dim : reductionDims)
      if (map.isFunctionOfDim(dim))
        return false;
    Value root = ke::getMemrefRoot(init.get());
    for (OpOperand *input : generic.getDpsInputOperands())
      if (isa<MemRefType>(input->get().getType()) &&
          (ke::getMemrefRoot(input->get()) == root ||
           !ke::isDistinctBuffer(root)))
        return false;
  }
  return true;
}

/// Replaces `generic` with a launch of one thread per point of its parallel
/// loops; its reduction loops run inside the thread, in order.
LogicalResult launchGeneric(linalg::GenericOp generic) {
  Location loc = generic.getLoc();
  if (!generic.hasPureBufferSemantics())
    return generic.emitError("the device reference maps ops on buffers only");
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  SmallVector<unsigned> parallelDims, reductionDims;
  int64_t points = 1;
  for (auto [dim, iterator] :
       llvm::enumerate(generic.getIteratorTypesArray())) {
    if (ShapedType::isDynamic(ranges[dim]))
      return generic.emitError(
          "the device reference needs static loop ranges");
    if (linalg::isParallelIterator(iterator)) {
      parallelDims.push_back(dim);
      points *= ranges[dim];
    } else {
      reductionDims.push_back(dim);
    }
  }
  if (llvm::is_contained(ranges, 0)) { // no iteration: nothing to do
    generic.erase();
    return success();
  }
  int64_t threads = std::min(points, kThreadsPerBlock);
  int64_t blocks = llvm::divideCeil(points, threads);
  if (blocks > std::numeric_limits<int32_t>::max())
    return generic.emitError("the device reference cannot launch ")
           << points << " threads in one grid dimension";
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << blocks << " x " << threads
                          << " threads, " << reductionDims.size()
                          << " reduction loops\n");

  OpBuilder builder(generic);
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, value);
  };
  Value one = constant(1);
  auto launch = gpu::LaunchOp::create(builder, loc, constant(blocks), one, one,
                                      constant(threads), one, one);
  builder.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(builder, loc);
  builder.setInsertionPointToStart(&launch.getBody().front());
  Value point = arith::AddIOp::create(
      builder, loc,
      arith::MulIOp::create(builder, loc, launch.getBlockIds().x,
                            constant(threads)),
      launch.getThreadIds().x);
  Value inRange = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                                        point, constant(points));
  auto guard = scf::IfOp::create(builder, loc, inRange, /*withElse=*/false);
  builder.setInsertionPointToStart(guard.thenBlock());

  // The parallel indices, the last loop fastest; the guard bounds the first.
  SmallVector<Value> ivs(ranges.size());
  Value rest = point;
  for (unsigned dim : llvm::reverse(llvm::drop_begin(parallelDims))) {
    Value size = constant(ranges[dim]);
    ivs[dim] = arith::RemUIOp::create(builder, loc, rest, size);
    rest = arith::DivUIOp::create(builder, loc, rest, size);
  }
  if (!parallelDims.empty())
    ivs[parallelDims.front()] = rest;

  // Reduction indices are 0 until their loops set them: the outputs' maps
  // carried across those loops do not read them.
  SmallVector<Value> lowerBounds, upperBounds, steps;
  for (unsigned dim : reductionDims) {
    ivs[dim] = constant(0);
    lowerBounds.push_back(ivs[dim]);
    upperBounds.push_back(constant(ranges[dim]));
    steps.push_back(one);
  }
  auto setReductionIvs = [&](ValueRange loopIvs) {
    for (auto [dim, iv] : llvm::zip(reductionDims, loopIvs))
      ivs[dim] = iv;
  };

  if (reductionDims.empty()) {
    SmallVector<Value> outs =
        loadOutputs(builder, loc, generic, ivs, /*all=*/false);
    storeOutputs(builder, loc, generic, ivs,
                 emitPoint(builder, loc, generic, ivs, outs, /*inF64=*/false));
  } else if (canCarryOutputs(generic, reductionDims)) {
    // The outputs' maps read parallel loops only: ivs so far index them.
    SmallVector<Value> outerIvs = ivs;
    // The accurate path: carried in f64 across the reduction.
    SmallVector<Value> initial;
    for (Value value :
         loadOutputs(builder, loc, generic, outerIvs, /*all=*/true))
      initial.push_back(isNarrowFloat(value.getType())
                            ? castFloat(builder, loc, value,
                                        builder.getF64Type())
                            : value);
    scf::LoopNest nest = scf::buildLoopNest(
        builder, loc, lowerBounds, upperBounds, steps, initial,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange loopIvs,
            ValueRange carried) -> scf::ValueVector {
          setReductionIvs(loopIvs);
          return emitPoint(nested, nestedLoc, generic, ivs, carried,
                           /*inF64=*/true);
        });
    storeOutputs(builder, loc, generic, outerIvs, nest.results);
  } else {
    scf::buildLoopNest(builder, loc, lowerBounds, upperBounds, steps,
                       [&](OpBuilder &nested, Location nestedLoc,
                           ValueRange loopIvs) {
                         setReductionIvs(loopIvs);
                         SmallVector<Value> outs = loadOutputs(
                             nested, nestedLoc, generic, ivs, /*all=*/false);
                         storeOutputs(nested, nestedLoc, generic, ivs,
                                      emitPoint(nested, nestedLoc, generic,
                                                ivs, outs, /*inF64=*/false));
                       });
  }
  generic.erase();
  return success();
}

LogicalResult mapReferenceLaunches(func::FuncOp host) {
  copiesToLinalg(host);
  SmallVector<linalg::LinalgOp> ops;
  for (Operation &op : host.getBody().front())
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      ops.push_back(linalgOp);
  IRRewriter rewriter(host.getContext());
  for (linalg::LinalgOp op : ops) {
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return op->emitError("the device reference cannot map this op: it "
                             "has no generic form");
      generic = *generalized;
    }
    if (failed(launchGeneric(generic)))
      return failure();
  }
  return success();
}

struct GpuReferenceLaunchesPass
    : ke::impl::GpuReferenceLaunchesPassBase<GpuReferenceLaunchesPass> {
  void runOnOperation() override {
    auto host =
        getOperation().lookupSymbol<func::FuncOp>(ke::kKernelFunctionName);
    if (!host || host.isExternal())
      return;
    if (host.getBody().getBlocks().size() != 1) {
      host.emitError("the device reference maps a kernel of one block");
      return signalPassFailure();
    }
    if (failed(mapReferenceLaunches(host)))
      signalPassFailure();
  }
};

} // namespace

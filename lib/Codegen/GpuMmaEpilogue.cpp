//===- GpuMmaEpilogue.cpp - Fused consumers of mma.sync tiles -------------===//
//
// A gpu.mma kernel with a fused elementwise consumer (bias, activation,
// scaling, the cast of a bf16 nn.Linear's result) leaves, per warp:
//
//   the stage loop                 accumulators carried as 16x8 vectors
//   transfer_write acc -> T        T: the block's f32 tile, private memory
//   transfer_read T, other reads, elementwise ops on 16x8 vectors
//   transfer_write -> output
//
// The vectors are warp-level: upstream's mma.sync conversion gives each
// lane its part of an accumulator (two rows of two elements for m16n8),
// but it converts only contractions, transfers and constants, so the
// consumer's ops would stop it. The consumer is rewritten first, per lane
// (distributeMmaEpilogues): each lane computes the elements of the
// fragment it holds, reading T where the conversion will store its
// accumulators and every other operand at the same positions. After the
// conversion each of those reads of T finds the store of the same
// position and takes its value (forwardMmaEpilogueTiles): T is gone, and
// the consumer runs on the accumulator registers.
//
// T is per-thread memory, so every step is exact on its own: a lane reads
// back what it stored. The forwarding is what makes it fast, and a read it
// cannot forward is an error, never a 64 KiB local-memory array.
//
//===----------------------------------------------------------------------===//

#include "GpuMmaEpilogue.h"
#include "GpuMemory.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/Utils/MMAUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Utils/VectorUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Transforms/CSE.h"

#include <array>
#include <tuple>

using namespace mlir;

namespace {

/// The mma.sync accumulator tile (m16n8) whose fragment layout the
/// epilogue takes.
constexpr int64_t kTileRows = 16, kTileCols = 8;

bool isPrivateRead(Operation *op) {
  auto read = dyn_cast_if_present<vector::TransferReadOp>(op);
  return read && ke::isPrivateMemref(read.getBase().getType());
}

/// The private tile `value` is computed from, if any: the element type of
/// the first private read in its backward slice, or null.
Type privateTileElementType(Value value) {
  SmallVector<Value> worklist{value};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def)
      continue;
    if (isPrivateRead(def))
      return cast<vector::TransferReadOp>(def).getVectorType().getElementType();
    for (Value operand : def->getOperands())
      if (isa<VectorType>(operand.getType()))
        worklist.push_back(operand);
  }
  return {};
}

Value addIndices(OpBuilder &b, Location loc, Value a, Value c) {
  AffineExpr d0, d1;
  bindDims(b.getContext(), d0, d1);
  return affine::makeComposedAffineApply(b, loc, d0 + d1, {a, c});
}

Value addConstant(OpBuilder &b, Location loc, Value a, int64_t c) {
  if (c == 0)
    return a;
  AffineExpr d0 = b.getAffineDimExpr(0);
  return affine::makeComposedAffineApply(b, loc, d0 + c, {a});
}

/// Builds, for one lane, `width` consecutive elements (one register of its
/// accumulator fragment) of warp-level 16x8 values: elements [row,
/// col..col+width) of a tile, [col..col+width) of a row that a tile
/// broadcasts. The ops are clones of the warp-level ones on the lane's
/// slices; reads read the slice.
class LaneSlicer {
public:
  LaneSlicer(OpBuilder &b, Location loc, int64_t width, Value laneId,
             Value valueId, AffineMap coords)
      : b(b), loc(loc), width(width), laneId(laneId), valueId(valueId),
        coords(coords) {}

  /// The lane's elements of the 16x8 value `v`; `atFragment` when (row,
  /// col) are the register's own coordinates (no slice offsets added).
  FailureOr<Value> tile(Value v, Value row, Value col, bool atFragment);
  /// The lane's elements of the 1-D value `v` from `col`: `count` of them
  /// (the register's width when 0).
  FailureOr<Value> line(Value v, Value col, int64_t count = 0);

private:
  VectorType laneType(Value v, int64_t count = 0) const {
    return VectorType::get({count ? count : width},
                           getElementTypeOrSelf(v.getType()));
  }
  FailureOr<Value> unsupported(Value v) const;
  FailureOr<Value> privateRead(vector::TransferReadOp read);
  /// Clones the elementwise `op` on operands `slice` gives.
  FailureOr<Value> cloneElementwise(Operation *op,
                                    function_ref<FailureOr<Value>(Value)> slice,
                                    int64_t count = 0);
  /// A splat constant or a broadcast scalar as the lane's vector; null
  /// when `op` is neither.
  Value splat(Operation *op, Value v, int64_t count = 0);

  OpBuilder &b;
  Location loc;
  int64_t width;
  Value laneId, valueId;
  AffineMap coords;
  /// Slices built: (value, row, column, count) to the lane's vector.
  DenseMap<std::tuple<Value, Value, Value, int64_t>, Value> done;
};

FailureOr<Value> LaneSlicer::unsupported(Value v) const {
  Operation *def = v.getDefiningOp();
  InFlightDiagnostic diag = def ? def->emitError() : emitError(loc);
  diag << "an op of a tensor-core epilogue that ke cannot apply per lane "
          "(supported: vector transfers, elementwise ops, constants, "
          "broadcasts and slices)";
  return failure();
}

/// A read of the private tile, at the indices upstream's conversion gives
/// the store of the same accumulator register (getXferIndices in
/// VectorToGPU.cpp, for the identity map): the forwarding matches them.
FailureOr<Value> LaneSlicer::privateRead(vector::TransferReadOp read) {
  if (!read.getPermutationMap().isMinorIdentity() || read.getMask())
    return unsupported(read.getResult());
  SmallVector<Value> indices(read.getIndices());
  unsigned result = 0;
  for (AffineExpr expr : read.getPermutationMap().getResults()) {
    unsigned position = cast<AffineDimExpr>(expr).getPosition();
    SmallVector<OpFoldResult> dims = {laneId, valueId, indices[position]};
    AffineExpr previous = b.getAffineDimExpr(coords.getNumDims());
    indices[position] = affine::makeComposedAffineApply(
        b, loc, previous + coords.getResult(result++), dims);
  }
  return vector::LoadOp::create(b, loc, laneType(read.getResult()),
                                read.getBase(), indices)
      .getResult();
}

FailureOr<Value> LaneSlicer::cloneElementwise(
    Operation *op, function_ref<FailureOr<Value>(Value)> slice, int64_t count) {
  SmallVector<Value> operands;
  for (Value operand : op->getOperands()) {
    if (!isa<VectorType>(operand.getType())) {
      operands.push_back(operand);
      continue;
    }
    FailureOr<Value> sliced = slice(operand);
    if (failed(sliced))
      return failure();
    operands.push_back(*sliced);
  }
  OperationState state(loc, op->getName());
  state.addOperands(operands);
  state.addAttributes(op->getAttrs());
  state.addTypes(laneType(op->getResult(0), count));
  return b.create(state)->getResult(0);
}

Value LaneSlicer::splat(Operation *op, Value v, int64_t count) {
  DenseElementsAttr value;
  if (matchPattern(v, m_Constant(&value)) && value.isSplat())
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(laneType(v, count),
                               value.getSplatValue<Attribute>()));
  auto broadcast = dyn_cast<vector::BroadcastOp>(op);
  if (broadcast && !isa<VectorType>(broadcast.getSourceType()))
    return vector::BroadcastOp::create(b, loc, laneType(v, count),
                                       broadcast.getSource());
  return {};
}

FailureOr<Value> LaneSlicer::tile(Value v, Value row, Value col,
                                  bool atFragment) {
  auto key = std::make_tuple(v, row, col, int64_t(0));
  if (Value known = done.lookup(key))
    return known;
  auto type = dyn_cast<VectorType>(v.getType());
  Operation *def = v.getDefiningOp();
  if (!type || type.getRank() != 2 || !def)
    return unsupported(v);
  FailureOr<Value> result = failure();
  if (Value constant = splat(def, v)) {
    result = constant;
  } else if (auto read = dyn_cast<vector::TransferReadOp>(def)) {
    if (isPrivateRead(read)) {
      if (!atFragment)
        return unsupported(v);
      result = privateRead(read);
    } else if (read.getMask()) {
      return unsupported(v);
    } else {
      // The slice's row and columns, moved onto the memref dimensions the
      // permutation map reads them from (none for a broadcast dimension).
      SmallVector<Value> indices(read.getIndices());
      AffineMap map = read.getPermutationMap();
      for (auto [dim, offset] :
           llvm::zip(map.getResults(), std::array<Value, 2>{row, col}))
        if (auto memrefDim = dyn_cast<AffineDimExpr>(dim))
          indices[memrefDim.getPosition()] =
              addIndices(b, loc, indices[memrefDim.getPosition()], offset);
      AffineMap laneMap = AffineMap::get(map.getNumDims(), 0,
                                         {map.getResult(1)}, b.getContext());
      result = vector::TransferReadOp::create(
                   b, loc, laneType(v), read.getBase(), indices,
                   read.getPadding(), laneMap, ArrayRef<bool>{true})
                   .getResult();
    }
  } else if (auto broadcast = dyn_cast<vector::BroadcastOp>(def)) {
    // A row broadcast to every row of the tile.
    auto source = dyn_cast<VectorType>(broadcast.getSourceType());
    if (!source || source.getRank() != 1)
      return unsupported(v);
    result = line(broadcast.getSource(), col);
  } else if (auto transpose = dyn_cast<vector::TransposeOp>(def)) {
    // A column broadcast to every column (a per-row bias): the lane's
    // elements are all the column's element at `row`.
    auto broadcast = transpose.getVector().getDefiningOp<vector::BroadcastOp>();
    auto source = broadcast ? dyn_cast<VectorType>(broadcast.getSourceType())
                            : VectorType();
    if (!source || source.getRank() != 1)
      return unsupported(v);
    FailureOr<Value> element = line(broadcast.getSource(), row, /*count=*/1);
    if (failed(element))
      return failure();
    Value scalar = vector::ExtractOp::create(b, loc, *element, 0);
    result =
        vector::BroadcastOp::create(b, loc, laneType(v), scalar).getResult();
  } else if (auto slice = dyn_cast<vector::ExtractStridedSliceOp>(def)) {
    if (slice.hasNonUnitStrides())
      return unsupported(v);
    SmallVector<int64_t> offsets;
    for (Attribute offset : slice.getOffsets())
      offsets.push_back(cast<IntegerAttr>(offset).getInt());
    result = tile(slice.getSource(), addConstant(b, loc, row, offsets[0]),
                  addConstant(b, loc, col, offsets[1]),
                  atFragment && offsets[0] == 0 && offsets[1] == 0);
  } else if (OpTrait::hasElementwiseMappableTraits(def) &&
             def->getNumResults() == 1) {
    result = cloneElementwise(def, [&](Value operand) {
      return tile(operand, row, col, atFragment);
    });
  } else {
    return unsupported(v);
  }
  if (succeeded(result))
    done[key] = *result;
  return result;
}

FailureOr<Value> LaneSlicer::line(Value v, Value col, int64_t count) {
  auto key = std::make_tuple(v, Value(), col, count);
  if (Value known = done.lookup(key))
    return known;
  auto type = dyn_cast<VectorType>(v.getType());
  Operation *def = v.getDefiningOp();
  if (!type || type.getRank() != 1 || !def)
    return unsupported(v);
  FailureOr<Value> result = failure();
  if (Value constant = splat(def, v, count)) {
    result = constant;
  } else if (auto read = dyn_cast<vector::TransferReadOp>(def)) {
    if (read.getMask() || isPrivateRead(read))
      return unsupported(v);
    SmallVector<Value> indices(read.getIndices());
    AffineMap map = read.getPermutationMap();
    if (auto memrefDim = dyn_cast<AffineDimExpr>(map.getResult(0)))
      indices[memrefDim.getPosition()] =
          addIndices(b, loc, indices[memrefDim.getPosition()], col);
    result = vector::TransferReadOp::create(
                 b, loc, laneType(v, count), read.getBase(), indices,
                 read.getPadding(), map, ArrayRef<bool>{true})
                 .getResult();
  } else if (auto slice = dyn_cast<vector::ExtractStridedSliceOp>(def)) {
    if (slice.hasNonUnitStrides())
      return unsupported(v);
    int64_t offset = cast<IntegerAttr>(slice.getOffsets()[0]).getInt();
    result = line(slice.getSource(), addConstant(b, loc, col, offset), count);
  } else if (OpTrait::hasElementwiseMappableTraits(def) &&
             def->getNumResults() == 1) {
    result = cloneElementwise(
        def, [&](Value operand) { return line(operand, col, count); }, count);
  } else {
    return unsupported(v);
  }
  if (succeeded(result))
    done[key] = *result;
  return result;
}

/// The accumulator tiles written to each private tile must be disjoint:
/// then every element has one store after the conversion, and a read of it
/// one store to forward from.
LogicalResult checkDisjointAccumulatorTiles(gpu::LaunchOp launch) {
  DenseMap<Value, SmallVector<vector::TransferWriteOp>> writes;
  launch.walk([&](vector::TransferWriteOp write) {
    DenseElementsAttr constant;
    if (ke::isPrivateMemref(write.getBase().getType()) &&
        !matchPattern(write.getVector(), m_Constant(&constant)))
      writes[write.getBase()].push_back(write);
  });
  for (auto &[tile, tileWrites] : writes)
    for (unsigned i = 0; i < tileWrites.size(); ++i)
      for (unsigned j = i + 1; j < tileWrites.size(); ++j)
        if (!vector::isDisjointTransferSet(
                cast<VectorTransferOpInterface>(tileWrites[i].getOperation()),
                cast<VectorTransferOpInterface>(tileWrites[j].getOperation()),
                /*testDynamicValueUsingBounds=*/true))
          return tileWrites[j].emitError(
              "accumulator tiles of a tensor-core epilogue may overlap");
  return success();
}

/// Rewrites one warp-level write of the epilogue per lane.
LogicalResult distributeWrite(vector::TransferWriteOp root, Type tileType) {
  OpBuilder b(root);
  Location loc = root.getLoc();
  VectorType type = root.getVectorType();
  AffineMap map = root.getPermutationMap();
  if (root.getMask() ||
      type.getShape() != ArrayRef<int64_t>{kTileRows, kTileCols} ||
      !llvm::all_of(map.getResults(),
                    [](AffineExpr e) { return isa<AffineDimExpr>(e); }))
    return root.emitError("a tensor-core epilogue write that is not one "
                          "unmasked 16x8 tile");
  nvgpu::WarpMatrixInfo info{VectorType::get({kTileRows, kTileCols}, tileType),
                             nvgpu::MatMulOperandRole::C};
  FailureOr<nvgpu::FragmentElementInfo> registers =
      nvgpu::getMmaSyncRegisterType(info);
  FailureOr<AffineMap> coords =
      nvgpu::getLaneIdAndValueIdToOperandCoord(b, loc, info);
  if (failed(registers) || failed(coords))
    return root.emitError("no mma.sync accumulator layout for ") << tileType;
  Value laneId = gpu::LaneIdOp::create(b, loc, /*upper_bound=*/nullptr);
  for (int64_t i = 0; i < registers->numRegistersPerFragment; ++i) {
    Value valueId = arith::ConstantOp::create(
        b, loc, b.getIndexType(),
        b.getIndexAttr(i * registers->elementsPerRegister));
    Value row = affine::makeComposedAffineApply(b, loc, coords->getResult(0),
                                                {laneId, valueId});
    Value col = affine::makeComposedAffineApply(b, loc, coords->getResult(1),
                                                {laneId, valueId});
    LaneSlicer slicer(b, loc, registers->elementsPerRegister, laneId, valueId,
                      *coords);
    FailureOr<Value> value =
        slicer.tile(root.getVector(), row, col, /*atFragment=*/true);
    if (failed(value))
      return failure();
    SmallVector<Value> indices(root.getIndices());
    for (auto [dim, offset] :
         llvm::zip(map.getResults(), std::array<Value, 2>{row, col})) {
      unsigned position = cast<AffineDimExpr>(dim).getPosition();
      indices[position] = addIndices(b, loc, indices[position], offset);
    }
    AffineMap laneMap =
        AffineMap::get(map.getNumDims(), 0, {map.getResult(1)}, b.getContext());
    vector::TransferWriteOp::create(b, loc, *value, root.getBase(), indices,
                                    laneMap, ArrayRef<bool>{true});
  }
  root.erase();
  return success();
}

/// Erases the ops of `launch` that nothing uses and that have no effect
/// but reads: the warp-level chains the lanes' code replaced.
void eraseDeadOps(gpu::LaunchOp launch) {
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<Operation *> dead;
    launch.getBody().walk<WalkOrder::PostOrder>([&](Operation *op) {
      if (op != launch && isOpTriviallyDead(op))
        dead.push_back(op);
    });
    for (Operation *op : llvm::reverse(dead)) {
      if (!op->use_empty())
        continue;
      op->erase();
      changed = true;
    }
  }
}

/// `a - b` when it is a constant: both the same affine.apply of the same
/// operands but for a constant term (a fragment's registers and tiles,
/// after CSE), else as value bounds prove it.
FailureOr<int64_t> constantDelta(Value a, Value b) {
  auto applyA = a.getDefiningOp<affine::AffineApplyOp>();
  auto applyB = b.getDefiningOp<affine::AffineApplyOp>();
  if (applyA && applyB && applyA.getOperands() == applyB.getOperands() &&
      applyA.getMap().getNumDims() == applyB.getMap().getNumDims()) {
    AffineMap map = applyA.getMap();
    AffineExpr difference = simplifyAffineExpr(
        applyA.getMap().getResult(0) - applyB.getMap().getResult(0),
        map.getNumDims(), map.getNumSymbols());
    if (auto constant = dyn_cast<AffineConstantExpr>(difference))
      return constant.getValue();
  }
  return ValueBoundsConstraintSet::computeConstantDelta(a, b);
}

/// Whether the `width`-element accesses at `a` and `b` provably touch no
/// common element: some index differs by a constant (by at least the
/// width on the last dimension).
bool areDisjointAccesses(ValueRange a, ValueRange b, int64_t width) {
  for (unsigned d = 0; d < a.size(); ++d) {
    if (a[d] == b[d])
      continue;
    FailureOr<int64_t> delta = constantDelta(a[d], b[d]);
    if (failed(delta))
      continue;
    bool last = d + 1 == a.size();
    if (last ? std::abs(*delta) >= width : *delta != 0)
      return true;
  }
  return false;
}

/// The store `load` reads back: the nearest earlier vector.store of its
/// block to the same memref at the same indices, with only stores of
/// provably other elements in between; null if there is none.
vector::StoreOp findForwardingStore(vector::LoadOp load) {
  int64_t width = load.getVectorType().getNumElements();
  for (Operation *op = load->getPrevNode(); op; op = op->getPrevNode()) {
    if (isMemoryEffectFree(op) || isa<vector::LoadOp>(op))
      continue;
    auto store = dyn_cast<vector::StoreOp>(op);
    if (!store) {
      if (ke::mayWriteMemory(op, [&](Value written) {
            return ke::getMemrefRoot(written) == load.getBase();
          }))
        return {};
      continue;
    }
    if (store.getBase() != load.getBase())
      continue;
    if (llvm::equal(store.getIndices(), load.getIndices()) &&
        store.getVectorType() == load.getVectorType())
      return store;
    if (!areDisjointAccesses(store.getIndices(), load.getIndices(), width))
      return {};
  }
  return {};
}

} // namespace

LogicalResult ke::distributeMmaEpilogues(gpu::LaunchOp launch) {
  SmallVector<std::pair<vector::TransferWriteOp, Type>> roots;
  launch.walk([&](vector::TransferWriteOp write) {
    if (isPrivateMemref(write.getBase().getType()))
      return;
    if (Type tile = privateTileElementType(write.getVector()))
      roots.push_back({write, tile});
  });
  if (roots.empty())
    return success();
  if (failed(checkDisjointAccumulatorTiles(launch)))
    return failure();
  for (auto [root, tile] : roots)
    if (failed(distributeWrite(root, tile)))
      return failure();
  eraseDeadOps(launch);
  return success();
}

LogicalResult ke::forwardMmaEpilogueTiles(gpu::LaunchOp launch) {
  SmallVector<memref::AllocOp> tiles;
  launch.walk([&](memref::AllocOp alloc) {
    if (isPrivateMemref(alloc.getType()))
      tiles.push_back(alloc);
  });
  if (tiles.empty())
    return success();
  // The loads were built with the indices the conversion gives the stores;
  // CSE makes them the same values.
  IRRewriter rewriter(launch.getContext());
  DominanceInfo dominance(launch);
  eliminateCommonSubExpressions(rewriter, dominance, launch);
  for (memref::AllocOp tile : tiles) {
    SmallVector<vector::LoadOp> loads;
    for (Operation *user : tile->getUsers())
      if (auto load = dyn_cast<vector::LoadOp>(user))
        loads.push_back(load);
    for (vector::LoadOp load : loads) {
      vector::StoreOp store = findForwardingStore(load);
      if (!store)
        return load.emitError("a read of a tensor-core epilogue's block tile "
                              "that no accumulator store forwards to");
      load.getResult().replaceAllUsesWith(store.getValueToStore());
      load.erase();
    }
    for (Operation *user : llvm::to_vector(tile->getUsers())) {
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      if (!effects || effects.hasEffect<MemoryEffects::Read>() ||
          !user->use_empty())
        return user->emitError("a use of a tensor-core epilogue's block tile "
                               "other than a store, left after forwarding");
      user->erase();
    }
    tile.erase();
  }
  return success();
}

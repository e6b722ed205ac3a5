//===- GpuReductions.cpp - Block-wide combines of GPU reductions ----------===//
//
// See GpuReductions.h. Runs on the outlined kernels once vector transfers
// are loads and shared buffers attributions; upstream's
// all-reduce rewrite (part of convert-gpu-to-nvvm / convert-gpu-to-rocdl)
// then lowers each gpu.all_reduce to shuffles within warps, a workgroup
// buffer of one value per warp and two barriers.
//
//===----------------------------------------------------------------------===//

#include "GpuReductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Utils/VectorUtils.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace {

/// Most rows of partial results combined per block this way: each row costs
/// one block-wide reduction (two barriers).
constexpr int64_t kMaxRows = 16;

std::optional<gpu::AllReduceOperation>
getAllReduceKind(vector::CombiningKind kind) {
  using K = vector::CombiningKind;
  using G = gpu::AllReduceOperation;
  switch (kind) {
  case K::ADD: return G::ADD;
  case K::MUL: return G::MUL;
  case K::MINUI: return G::MINUI;
  case K::MINSI: return G::MINSI;
  case K::MINNUMF: return G::MINNUMF;
  case K::MAXUI: return G::MAXUI;
  case K::MAXSI: return G::MAXSI;
  case K::MAXNUMF: return G::MAXNUMF;
  case K::AND: return G::AND;
  case K::OR: return G::OR;
  case K::XOR: return G::XOR;
  case K::MINIMUMF: return G::MINIMUMF;
  case K::MAXIMUMF: return G::MAXIMUMF;
  }
  return std::nullopt;
}

bool isWorkgroup(MemRefType type) {
  auto space =
      dyn_cast_if_present<gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

/// The block's x size when the kernel's known block is [x, 1, 1].
std::optional<int64_t> getBlockThreads(gpu::GPUFuncOp kernel) {
  std::optional<ArrayRef<int32_t>> known = kernel.getKnownBlockSize();
  if (!known || known->size() != 3 || (*known)[1] != 1 || (*known)[2] != 1)
    return std::nullopt;
  return (*known)[0];
}

/// The scf.if directly in the kernel's body that holds `op`, through scf.if
/// ops only (a combine inside a loop is not block-uniform).
scf::IfOp getUniformGuard(Operation *op, gpu::GPUFuncOp kernel) {
  scf::IfOp guard;
  for (Operation *parent = op->getParentOp(); parent != kernel;
       parent = parent->getParentOp()) {
    auto ifOp = dyn_cast<scf::IfOp>(parent);
    if (!ifOp)
      return nullptr;
    guard = ifOp;
  }
  if (guard && guard->getBlock() != &kernel.getBody().front())
    return nullptr;
  return guard;
}

LogicalResult rewriteCombine(vector::ReductionOp reduction,
                             gpu::GPUFuncOp kernel) {
  auto load = reduction.getVector().getDefiningOp<vector::LoadOp>();
  std::optional<gpu::AllReduceOperation> kind =
      getAllReduceKind(reduction.getKind());
  std::optional<int64_t> threads = getBlockThreads(kernel);
  if (!load || !kind || !threads)
    return failure();
  Type element = reduction.getDest().getType();
  // 16-bit floats are combined in f32 (the shuffles move 32-bit values;
  // the wider type also keeps the cross-thread sum accurate).
  bool widen = isa<FloatType>(element) && element.getIntOrFloatBitWidth() == 16;
  if (!element.isIntOrFloat() ||
      (element.getIntOrFloatBitWidth() != 32 && !widen))
    return failure();
  Type combineType = widen ? Float32Type::get(element.getContext()) : element;
  MemRefType type = load.getMemRefType();
  VectorType vector = load.getVectorType();
  if (!isWorkgroup(type) || !type.hasStaticShape() ||
      !type.getLayout().isIdentity() || vector.getRank() != 1 ||
      vector.getDimSize(0) != *threads || type.getShape().back() != *threads ||
      !isConstantIntValue(load.getIndices().back(), 0))
    return failure();
  int64_t rows = type.getNumElements() / *threads;
  scf::IfOp guard = getUniformGuard(reduction, kernel);
  if (!guard || rows > kMaxRows)
    return failure();
  // The buffer must be defined outside the guard (the whole block reads it
  // before the guard; a def outside the guard that dominates the load
  // dominates the guard as well).
  Value base = load.getBase();
  if (Operation *def = base.getDefiningOp(); def && guard->isAncestor(def))
    return failure();

  // Every thread: its element of each row, reduced over the block.
  Location loc = reduction.getLoc();
  OpBuilder b(guard);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  ArrayRef<int64_t> leading = type.getShape().drop_back();
  SmallVector<Value> rowResults;
  for (int64_t row = 0; row < rows; ++row) {
    SmallVector<Value> indices;
    int64_t rest = row;
    SmallVector<int64_t> position(leading.size());
    for (int64_t d = int64_t(leading.size()) - 1; d >= 0; --d) {
      position[d] = rest % leading[d];
      rest /= leading[d];
    }
    for (int64_t p : position)
      indices.push_back(arith::ConstantIndexOp::create(b, loc, p));
    indices.push_back(tid);
    Value mine = memref::LoadOp::create(b, loc, base, indices);
    if (widen)
      mine = arith::ExtFOp::create(b, loc, combineType, mine);
    auto allReduce = gpu::AllReduceOp::create(
        b, loc, combineType, mine,
        gpu::AllReduceOperationAttr::get(b.getContext(), *kind),
        /*uniform=*/true);
    Value rowResult = allReduce.getResult();
    if (widen)
      rowResult = arith::TruncFOp::create(b, loc, element, rowResult);
    rowResults.push_back(rowResult);
  }

  // The owning thread: the result of the row it loaded.
  b.setInsertionPoint(reduction);
  Value picked = rowResults.front();
  if (rows > 1) {
    Value linear = arith::ConstantIndexOp::create(b, loc, 0);
    for (auto [index, extent] :
         llvm::zip(load.getIndices().drop_back(), leading)) {
      Value scaled = arith::MulIOp::create(
          b, loc, linear, arith::ConstantIndexOp::create(b, loc, extent));
      linear = arith::AddIOp::create(b, loc, scaled, index);
    }
    for (int64_t row = 1; row < rows; ++row) {
      Value is = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq, linear,
          arith::ConstantIndexOp::create(b, loc, row));
      picked = arith::SelectOp::create(b, loc, is, rowResults[row], picked);
    }
  }
  Value result = picked;
  if (Value acc = reduction.getAcc())
    result = vector::makeArithReduction(b, loc, reduction.getKind(), picked,
                                        acc, reduction.getFastmathAttr());
  reduction.replaceAllUsesWith(result);
  reduction.erase();
  if (load->use_empty())
    load.erase();
  return success();
}

} // namespace

void ke::combinePartialsWithAllReduce(ModuleOp module) {
  SmallVector<std::pair<vector::ReductionOp, gpu::GPUFuncOp>> candidates;
  module.walk([&](vector::ReductionOp reduction) {
    if (auto kernel = reduction->getParentOfType<gpu::GPUFuncOp>();
        kernel && kernel.isKernel())
      candidates.emplace_back(reduction, kernel);
  });
  for (auto [reduction, kernel] : candidates)
    (void)rewriteCombine(reduction, kernel);
}

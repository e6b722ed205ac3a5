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

#include "ke/Codegen/Passes.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Utils/VectorUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-gpu-reductions"

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

/// Threads of the block that combines a global reduction's partials.
constexpr int64_t kCombineThreads = 256;

/// The 1-D static host allocation that `vector` reads whole from index 0.
memref::AllocOp getWholeAllocRead(Value vector, func::FuncOp host) {
  auto type = dyn_cast<VectorType>(vector.getType());
  if (!type || type.getRank() != 1 || type.isScalable())
    return nullptr;
  Value base;
  ValueRange indices;
  if (auto read = vector.getDefiningOp<vector::TransferReadOp>()) {
    if (read.getMask() || !read.getPermutationMap().isMinorIdentity() ||
        read.getInBoundsValues() != ArrayRef<bool>{true})
      return nullptr;
    base = read.getBase();
    indices = read.getIndices();
  } else if (auto load = vector.getDefiningOp<vector::LoadOp>()) {
    base = load.getBase();
    indices = load.getIndices();
  } else {
    return nullptr;
  }
  auto alloc = base.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getParentOp() != host ||
      vector.getDefiningOp()->getParentOp() != host ||
      !alloc.getType().hasStaticShape() || alloc.getType().getRank() != 1 ||
      alloc.getType().getDimSize(0) != type.getDimSize(0) ||
      !llvm::all_of(indices,
                    [](Value v) { return isConstantIntValue(v, 0); }))
    return nullptr;
  return alloc;
}

LogicalResult launchHostCombine(vector::ReductionOp reduction,
                                func::FuncOp host) {
  memref::AllocOp partials = getWholeAllocRead(reduction.getVector(), host);
  std::optional<gpu::AllReduceOperation> kind =
      getAllReduceKind(reduction.getKind());
  Type element = reduction.getDest().getType();
  if (!partials || !kind || !element.isIntOrFloat())
    return failure();
  // gpu.all_reduce shuffles 32-bit values; other widths (an i64 count of
  // valid targets in cross-entropy) are combined by one thread in order.
  bool shuffled = element.getIntOrFloatBitWidth() == 32;
  int64_t count = partials.getType().getDimSize(0);
  int64_t threads = shuffled ? std::min(count, kCombineThreads) : 1;
  if (count % threads != 0)
    return failure();

  Location loc = reduction.getLoc();
  Block *hostBlock = reduction->getBlock();
  OpBuilder b(reduction);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value blockSize = arith::ConstantIndexOp::create(b, loc, threads);
  auto launch =
      gpu::LaunchOp::create(b, loc, one, one, one, blockSize, one, one);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  // Each thread: partials tid, tid + T, ... in order.
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value first = memref::LoadOp::create(b, loc, partials, ValueRange{tid});
  Value step = arith::ConstantIndexOp::create(b, loc, threads);
  Value end = arith::ConstantIndexOp::create(b, loc, count);
  auto loop = scf::ForOp::create(
      b, loc, step, end, step, ValueRange{first},
      [&](OpBuilder &nb, Location nloc, Value i, ValueRange iters) {
        Value index = arith::AddIOp::create(nb, nloc, tid, i);
        Value next =
            memref::LoadOp::create(nb, nloc, partials, ValueRange{index});
        Value combined = vector::makeArithReduction(
            nb, nloc, reduction.getKind(), iters[0], next);
        scf::YieldOp::create(nb, nloc, combined);
      });
  Value result = loop.getResult(0);
  if (shuffled)
    result = gpu::AllReduceOp::create(
        b, loc, element, result,
        gpu::AllReduceOperationAttr::get(b.getContext(), *kind),
        /*uniform=*/true);
  // Thread 0: the init, then the host code that used the result.
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value isFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, zero);
  auto guard = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPoint(guard.thenBlock()->getTerminator());
  Value acc = reduction.getAcc();
  // An init read from the result buffer (an accumulator argument: a read
  // and a vector.extract of it) is read by thread 0 too: left on the host,
  // nothing would run it. The read's operands (buffer, indices, padding)
  // are defined before the launch.
  SmallVector<Operation *> initChain;
  for (Operation *def = acc ? acc.getDefiningOp() : nullptr;
       def && def->getBlock() == hostBlock && def->hasOneUse();) {
    initChain.push_back(def);
    if (!isMemoryEffectFree(def))
      break;
    if (def->getNumOperands() != 1)
      break;
    def = def->getOperand(0).getDefiningOp();
  }
  if (!initChain.empty() &&
      isa<vector::TransferReadOp, memref::LoadOp, vector::LoadOp>(
          initChain.back()) &&
      llvm::all_of(initChain.back()->getOperands(), [&](Value v) {
        Operation *d = v.getDefiningOp();
        return !d || d->isBeforeInBlock(launch);
      }))
    for (Operation *op : llvm::reverse(initChain))
      op->moveBefore(guard.thenBlock()->getTerminator());
  if (acc)
    result = vector::makeArithReduction(b, loc, reduction.getKind(), result,
                                        acc, reduction.getFastmathAttr());
  Operation *read = reduction.getVector().getDefiningOp();
  reduction.replaceAllUsesWith(result);
  // Move what follows (up to the return; deallocations stay) into the guard.
  SmallVector<Operation *> tail;
  for (Operation &op : llvm::make_range(std::next(Block::iterator(reduction)),
                                        hostBlock->end()))
    if (!op.hasTrait<OpTrait::IsTerminator>() && !isa<memref::DeallocOp>(op))
      tail.push_back(&op);
  for (Operation *op : tail)
    op->moveBefore(guard.thenBlock()->getTerminator());
  reduction.erase();
  if (read->use_empty())
    read->erase();
  return success();
}

} // namespace

void ke::launchHostCombines(ModuleOp module) {
  auto host = module.lookupSymbol<func::FuncOp>(ke::kKernelFunctionName);
  if (!host || host.isExternal() || !host.getBody().hasOneBlock())
    return;
  SmallVector<vector::ReductionOp> candidates;
  for (auto reduction : host.getBody().front().getOps<vector::ReductionOp>())
    candidates.push_back(reduction);
  // One per kernel module: a second would move into the first's guard.
  if (candidates.size() != 1)
    return;
  LogicalResult launched = launchHostCombine(candidates.front(), host);
  (void)launched;
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] host combine "
                          << (succeeded(launched) ? "launched on the GPU"
                                                  : "left as it is")
                          << "\n");
}

void ke::combinePartialsWithAllReduce(ModuleOp module) {
  SmallVector<std::pair<vector::ReductionOp, gpu::GPUFuncOp>> candidates;
  module.walk([&](vector::ReductionOp reduction) {
    if (auto kernel = reduction->getParentOfType<gpu::GPUFuncOp>();
        kernel && kernel.isKernel())
      candidates.emplace_back(reduction, kernel);
  });
  for (auto [reduction, kernel] : candidates) {
    LogicalResult rewritten = rewriteCombine(reduction, kernel);
    (void)rewritten;
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] combine in " << kernel.getName()
               << (succeeded(rewritten) ? ": gpu.all_reduce"
                                        : ": left as it is")
               << "\n");
  }
}

namespace ke {
#define GEN_PASS_DEF_GPULAUNCHHOSTCOMBINESPASS
#define GEN_PASS_DEF_GPUCOMBINEPARTIALSPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {
struct GpuLaunchHostCombinesPass
    : ke::impl::GpuLaunchHostCombinesPassBase<GpuLaunchHostCombinesPass> {
  void runOnOperation() override { ke::launchHostCombines(getOperation()); }
};
struct GpuCombinePartialsPass
    : ke::impl::GpuCombinePartialsPassBase<GpuCombinePartialsPass> {
  void runOnOperation() override {
    ke::combinePartialsWithAllReduce(getOperation());
  }
};
} // namespace

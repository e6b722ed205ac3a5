//===- GpuVectorToMma.cpp - Warp contractions on tensor cores -------------===//
//
// ke-gpu-vector-to-mma (ke/Codegen/Passes.td), a step of the CUDA lowering.
//
// The gpu.mma sketch leaves, in each gpu.launch, vector.contract ops of one
// mma.sync instruction each (16x8x16), their operands read from shared
// memory and their accumulators carried through the stage loop. Upstream's
// convertVectorToNVVMCompatibleMMASync turns them into ldmatrix and
// nvgpu.mma.sync, for f16 (and f32 as TF32) but not bf16 in MLIR 22
// (../shared/notes/tensor-cores-mlir22.md). A bf16 contraction is therefore
// converted as f16 (the 16-bit patterns move through ldmatrix and registers
// unchanged: the shared tiles are retyped, their writers bitcast) and each
// resulting mma.sync is then emitted as nvvm.mma.sync with bf16 operands.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Conversion/VectorToGPU/VectorToGPU.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/NVGPU/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-gpu-vector-to-mma"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_GPUVECTORTOMMAPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

bool hasBf16Operands(vector::ContractionOp contract) {
  return getElementTypeOrSelf(contract.getLhsType()).isBF16() &&
         getElementTypeOrSelf(contract.getRhsType()).isBF16();
}

/// `type` with f16 elements in place of bf16 ones.
Type asF16(Type type) {
  Type f16 = Float16Type::get(type.getContext());
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(f16);
  if (auto memref = dyn_cast<MemRefType>(type))
    return MemRefType::get(memref.getShape(), f16, memref.getLayout(),
                           memref.getMemorySpace());
  return f16;
}

/// Retypes the bf16 shared-memory tiles of `launch` to f16, bit for bit:
/// writes store their vectors bitcast, reads that feed a contraction read
/// f16 (the contraction then multiplies the same bits as f16, which the
/// mma.sync rewrite below gives back their bf16 meaning), other reads are
/// bitcast back. Fails (with a diagnostic) on a use it does not know.
LogicalResult retypeBf16SharedTiles(gpu::LaunchOp launch) {
  SmallVector<memref::AllocOp> allocs;
  launch.walk([&](memref::AllocOp alloc) {
    if (alloc.getType().getElementType().isBF16())
      allocs.push_back(alloc);
  });
  OpBuilder builder(launch.getContext());
  for (memref::AllocOp alloc : allocs) {
    for (Operation *user : alloc->getUsers()) {
      auto transfer = dyn_cast<VectorTransferOpInterface>(user);
      if (!transfer || transfer.getBase() != alloc.getResult())
        return user->emitError("a bf16 shared tile of a tensor-core "
                               "contraction has a use other than a vector "
                               "transfer");
    }
    alloc.getResult().setType(cast<MemRefType>(asF16(alloc.getType())));
    for (Operation *user : llvm::to_vector(alloc->getUsers())) {
      builder.setInsertionPoint(user);
      if (auto write = dyn_cast<vector::TransferWriteOp>(user)) {
        Value bits = arith::BitcastOp::create(
            builder, write.getLoc(), asF16(write.getVectorType()),
            write.getVector());
        write.getValueToStoreMutable().assign(bits);
        continue;
      }
      auto read = cast<vector::TransferReadOp>(user);
      Value padding = arith::BitcastOp::create(
          builder, read.getLoc(), builder.getF16Type(), read.getPadding());
      read.getPaddingMutable().assign(padding);
      Type bf16Type = read.getVectorType();
      read.getResult().setType(cast<VectorType>(asF16(bf16Type)));
      builder.setInsertionPointAfter(read);
      Value back;
      for (OpOperand &use : llvm::make_early_inc_range(read->getUses())) {
        if (isa<vector::ContractionOp>(use.getOwner()))
          continue;
        if (!back)
          back = arith::BitcastOp::create(builder, read.getLoc(), bf16Type,
                                          read.getResult());
        if (use.getOwner() != back.getDefiningOp())
          use.set(back);
      }
    }
  }
  return success();
}

/// nvgpu.mma.sync on f16 fragments that hold bf16 bits, as nvvm.mma.sync
/// m16n8k16 with bf16 operands (each pair of 16-bit values one i32
/// register) and an f32 accumulator.
LogicalResult emitBf16MmaSync(nvgpu::MmaSyncOp mma, RewriterBase &rewriter) {
  if (mma.getMmaShapeAsArray() != std::array<int64_t, 3>{16, 8, 16} ||
      !mma.getMatrixC().getType().getElementType().isF32())
    return mma.emitError("bf16 tensor-core contractions are emitted as "
                         "m16n8k16 with an f32 accumulator only");
  Location loc = mma.getLoc();
  rewriter.setInsertionPoint(mma);
  Type i32 = rewriter.getI32Type();
  auto registers = [&](Value fragment) {
    SmallVector<Value> values;
    auto type = cast<VectorType>(fragment.getType());
    for (int64_t row = 0; row < type.getDimSize(0); ++row) {
      Value pair = vector::ExtractOp::create(rewriter, loc, fragment, row);
      values.push_back(LLVM::BitcastOp::create(rewriter, loc, i32, pair));
    }
    return values;
  };
  SmallVector<Value> a = registers(mma.getMatrixA());
  SmallVector<Value> b = registers(mma.getMatrixB());
  VectorType cType = mma.getMatrixC().getType();
  SmallVector<Value> c;
  for (int64_t row = 0; row < cType.getDimSize(0); ++row)
    for (int64_t col = 0; col < cType.getDimSize(1); ++col)
      c.push_back(vector::ExtractOp::create(rewriter, loc, mma.getMatrixC(),
                                            ArrayRef<int64_t>{row, col}));
  Type resultType = LLVM::LLVMStructType::getLiteral(
      rewriter.getContext(), SmallVector<Type>(c.size(), rewriter.getF32Type()));
  Value result = NVVM::MmaOp::create(
      rewriter, loc, resultType, a, b, c, ArrayRef<int64_t>{16, 8, 16},
      /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                    NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> elements;
  for (int64_t i = 0, e = c.size(); i < e; ++i)
    elements.push_back(LLVM::ExtractValueOp::create(rewriter, loc, result, i));
  rewriter.replaceOpWithNewOp<vector::FromElementsOp>(mma, cType, elements);
  return success();
}

bool isWorkgroupMemory(Value memref) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  return type && gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(type);
}

/// Swizzles the shared tiles of `launch` against bank conflicts: the eight
/// rows an ldmatrix phase reads lie a row of the tile apart, 64 or 256
/// bytes, so unswizzled they hit the same four banks. Upstream's
/// optimizeSharedMemoryReadsAndWrites XORs each access's 16-byte column
/// with its row; it takes loads and stores (not 2-D transfers), so the
/// cooperative copies' transfers into shared memory are first unrolled to
/// rows of at most 16 bytes and lowered to vector.store / vector.load. A
/// tile it refuses keeps its layout (a slower kernel, not a wrong one).
void swizzleSharedTiles(gpu::LaunchOp launch) {
  MLIRContext *context = launch.getContext();
  RewritePatternSet rows(context);
  vector::populateVectorUnrollPatterns(
      rows, vector::UnrollVectorOptions()
                .setFilterConstraint([](Operation *op) {
                  auto transfer = dyn_cast<VectorTransferOpInterface>(op);
                  return success(transfer &&
                                 isWorkgroupMemory(transfer.getBase()) &&
                                 transfer.getVectorType().getRank() > 1);
                })
                .setNativeShapeFn([](Operation *op)
                                      -> std::optional<SmallVector<int64_t>> {
                  // Rows of at most 16 bytes: the swizzle permutes 16-byte
                  // columns, and a wider access would straddle two.
                  VectorType type =
                      cast<VectorTransferOpInterface>(op).getVectorType();
                  SmallVector<int64_t> shape(type.getRank(), 1);
                  shape.back() = std::min<int64_t>(
                      type.getShape().back(),
                      128 / type.getElementTypeBitWidth());
                  return shape;
                }));
  vector::populateCastAwayVectorLeadingOneDimPatterns(rows);
  vector::populateVectorTransferLoweringPatterns(rows, /*maxTransferRank=*/1);
  (void)applyPatternsGreedily(launch, std::move(rows));
  SmallVector<memref::AllocOp> allocs;
  launch.walk([&](memref::AllocOp alloc) {
    if (isWorkgroupMemory(alloc.getResult()))
      allocs.push_back(alloc);
  });
  for (memref::AllocOp alloc : allocs) {
    bool swizzled = succeeded(
        nvgpu::optimizeSharedMemoryReadsAndWrites(launch, alloc.getResult()));
    (void)swizzled;
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << alloc.getType()
                            << (swizzled ? " swizzled\n" : " kept\n"));
  }
}

/// True for a vector.transfer_read of global memory directly in `loop`'s
/// body: a stage's copy of its A or B tile.
bool isStageLoad(Operation *op, scf::ForOp loop) {
  auto read = dyn_cast<vector::TransferReadOp>(op);
  return read && read->getParentOp() == loop.getOperation() &&
         !isWorkgroupMemory(read.getBase());
}

/// Workgroup buffers an op reads and writes; false when it may touch
/// workgroup memory in a way it does not say.
bool collectSharedAccesses(Operation *op, llvm::SmallPtrSetImpl<Value> &reads,
                           llvm::SmallPtrSetImpl<Value> &writes) {
  if (isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  for (const MemoryEffects::EffectInstance &effect : instances) {
    Value value = effect.getValue();
    if (!value)
      return false;
    if (!isWorkgroupMemory(value))
      continue;
    if (!value.getDefiningOp<memref::AllocOp>())
      return false;
    if (isa<MemoryEffects::Write>(effect.getEffect()))
      writes.insert(value);
    else if (isa<MemoryEffects::Read>(effect.getEffect()))
      reads.insert(value);
  }
  return true;
}

/// Erases the barriers of a stage loop's body that order no conflicting
/// shared-memory accesses: the mapping puts one after every copy, so the
/// copy of A waits for nothing before B's copy starts. A barrier stays when
/// a buffer written on one side is read or written on the other (the one
/// before the multiply, and the one after it, which orders the next
/// iteration's copies after this one's reads), or when an access cannot
/// be placed.
void eraseUnneededStageBarriers(scf::ForOp loop) {
  SmallVector<gpu::BarrierOp> barriers;
  for (Operation &op : *loop.getBody())
    if (auto barrier = dyn_cast<gpu::BarrierOp>(&op))
      barriers.push_back(barrier);
  for (gpu::BarrierOp barrier : barriers) {
    // The accesses since the previous barrier and until the next one.
    llvm::SmallPtrSet<Value, 4> readsBefore, writesBefore, readsAfter,
        writesAfter;
    bool known = true;
    for (Operation *op = barrier->getPrevNode();
         op && !isa<gpu::BarrierOp>(op); op = op->getPrevNode())
      known &= collectSharedAccesses(op, readsBefore, writesBefore);
    Operation *op = barrier->getNextNode();
    for (; op && !isa<gpu::BarrierOp>(op) && !op->hasTrait<OpTrait::IsTerminator>();
         op = op->getNextNode())
      known &= collectSharedAccesses(op, readsAfter, writesAfter);
    // The last barrier of the body also orders the next iteration's first
    // segment, which this walk does not see.
    if (!op || !isa<gpu::BarrierOp>(op))
      continue;
    auto conflict = [](auto &written, auto &other) {
      return llvm::any_of(written,
                          [&](Value v) { return other.contains(v); });
    };
    if (!known || conflict(writesBefore, readsAfter) ||
        conflict(writesBefore, writesAfter) ||
        conflict(writesAfter, readsBefore))
      continue;
    barrier->erase();
  }
}

/// Software-pipelines a stage loop by one iteration: the global loads of
/// stage k + 1 are issued at the top of iteration k, into registers, and
/// stored to shared memory at the top of iteration k + 1. Their latency
/// then overlaps the ldmatrix and mma.sync of stage k, where without it
/// every stage waited for its loads with the tensor cores idle (the
/// barrier at the end of each iteration still keeps the stores of stage
/// k + 1 after the reads of stage k). Upstream's scf pipeliner does the
/// rotation (a prologue load, an epilogue stage): stage 0 is the loads
/// and what computes their indices, stage 1 the rest. A loop it declines
/// is left as it is; one it fails half way through is an error.
LogicalResult prefetchStageLoads(gpu::LaunchOp launch) {
  SmallVector<scf::ForOp> loops;
  launch.walk([&](scf::ForOp loop) {
    bool tensorCores = false, loads = false;
    for (Operation &op : *loop.getBody()) {
      tensorCores |= isa<nvgpu::MmaSyncOp, NVVM::MmaOp>(op);
      loads |= isStageLoad(&op, loop);
    }
    if (tensorCores && loads)
      loops.push_back(loop);
  });
  IRRewriter rewriter(launch.getContext());
  for (scf::ForOp loop : loops) {
    // The stage's shared tiles, allocated in the body, move before the
    // loop: the pipeliner would otherwise give the peeled last stage
    // buffers of its own, doubling the block's shared memory. Each
    // iteration writes a tile whole before reading it, and the barrier at
    // the end of the body keeps the next iteration's writes after this
    // one's reads, so one buffer serves every iteration.
    for (Operation &op : llvm::make_early_inc_range(*loop.getBody())) {
      auto alloc = dyn_cast<memref::AllocOp>(&op);
      if (alloc && alloc->getNumOperands() == 0 &&
          isWorkgroupMemory(alloc.getResult()))
        alloc->moveBefore(loop);
    }
    eraseUnneededStageBarriers(loop);
    llvm::SetVector<Operation *> early;
    for (Operation &op : *loop.getBody()) {
      if (!isStageLoad(&op, loop))
        continue;
      BackwardSliceOptions options;
      options.inclusive = true;
      options.filter = [&](Operation *o) {
        return o->getParentOp() == loop.getOperation();
      };
      (void)getBackwardSlice(&op, &early, options);
    }
    scf::PipeliningOption options;
    options.getScheduleFn =
        [&](scf::ForOp forOp,
            std::vector<std::pair<Operation *, unsigned>> &schedule) {
          for (Operation &op : forOp.getBody()->without_terminator())
            if (early.contains(&op))
              schedule.emplace_back(&op, 0);
          for (Operation &op : forOp.getBody()->without_terminator())
            if (!early.contains(&op))
              schedule.emplace_back(&op, 1);
        };
    bool modified = false;
    rewriter.setInsertionPoint(loop);
    Location loc = loop.getLoc();
    if (succeeded(scf::pipelineForLoop(rewriter, loop, options, &modified)))
      continue;
    // A pipeliner that gave up half way leaves IR nobody can trust.
    if (modified)
      return emitError(loc, "pipelining the stage loop failed half way");
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] stage loop left as it is\n");
  }
  return success();
}

/// The constant splat `write` stores, or null.
Attribute splatWritten(vector::TransferWriteOp write) {
  DenseElementsAttr value;
  if (!matchPattern(write.getVector(), m_Constant(&value)) ||
      !value.isSplat())
    return {};
  return value;
}

/// True when `a` and `b` move the same elements of the same buffer.
bool sameTransferTile(VectorTransferOpInterface a,
                      VectorTransferOpInterface b) {
  return a.getBase() == b.getBase() && a.getIndices() == b.getIndices() &&
         a.getVectorType() == b.getVectorType() &&
         a.getPermutationMap() == b.getPermutationMap();
}

/// The accumulators start from the output tile the fill wrote: each warp
/// stores its zeros to global memory, waits at a barrier, and reads them
/// back before the stage loop (64 KiB each way for a 128x128 f32 block).
/// The read takes the stored constant instead, when every write to its
/// buffer since that store is the same constant; and a fill that nothing
/// reads any more, and that a later write of the same tile in the same
/// block overwrites, is erased.
void forwardAccumulatorFills(gpu::LaunchOp launch) {
  SmallVector<vector::TransferReadOp> reads;
  launch.walk([&](vector::TransferReadOp read) {
    if (!isWorkgroupMemory(read.getBase()) && !read.getMask())
      reads.push_back(read);
  });
  OpBuilder builder(launch.getContext());
  for (vector::TransferReadOp read : reads) {
    vector::TransferWriteOp source;
    for (Operation *op = read->getPrevNode(); op && !source;
         op = op->getPrevNode()) {
      if (isa<gpu::BarrierOp>(op) || isMemoryEffectFree(op))
        continue;
      auto write = dyn_cast<vector::TransferWriteOp>(op);
      if (!write) {
        auto effects = dyn_cast<MemoryEffectOpInterface>(op);
        if (!effects || effects.getEffectOnValue<MemoryEffects::Write>(
                            read.getBase()) ||
            !effects.hasEffect<MemoryEffects::Write>() ||
            llvm::any_of(op->getOperands(), [&](Value v) {
              return v == read.getBase();
            }))
          break;
        continue;
      }
      if (write.getBase() != read.getBase() || !splatWritten(write) ||
          write.getMask())
        break;
      if (sameTransferTile(write, read))
        source = write;
    }
    auto constant = source ? source.getVector().getDefiningOp<arith::ConstantOp>()
                           : arith::ConstantOp();
    if (!constant || source.getVectorType() != read.getVectorType())
      continue;
    builder.setInsertionPoint(read);
    read.getResult().replaceAllUsesWith(
        builder.clone(*constant)->getResult(0));
    read->erase();
  }
  SmallVector<vector::TransferWriteOp> fills;
  launch.walk([&](vector::TransferWriteOp write) {
    if (splatWritten(write) && !isWorkgroupMemory(write.getBase()))
      fills.push_back(write);
  });
  for (vector::TransferWriteOp fill : fills) {
    Value base = fill.getBase();
    bool read = llvm::any_of(base.getUsers(), [&](Operation *user) {
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      return !effects || effects.getEffectOnValue<MemoryEffects::Read>(base);
    });
    if (read)
      continue;
    bool overwritten = false;
    for (Operation *op = fill->getNextNode(); op && !overwritten;
         op = op->getNextNode())
      if (auto later = dyn_cast<vector::TransferWriteOp>(op))
        overwritten = later != fill && !later.getMask() &&
                      sameTransferTile(later, fill);
    if (overwritten)
      fill->erase();
  }
}

/// Converts the contractions of one launch; fails with a diagnostic.
LogicalResult convertLaunch(gpu::LaunchOp launch) {
  bool bf16 = false;
  launch.walk([&](vector::ContractionOp contract) {
    bf16 |= hasBf16Operands(contract);
  });
  if (bf16 && failed(retypeBf16SharedTiles(launch)))
    return failure();
  forwardAccumulatorFills(launch);
  MLIRContext *context = launch.getContext();
  RewritePatternSet prepare(context);
  populatePrepareVectorToMMAPatterns(prepare, /*useNvGpu=*/true);
  if (failed(applyPatternsGreedily(launch, std::move(prepare))))
    return launch.emitError("preparing contractions for mma.sync failed");
  IRRewriter rewriter(context);
  if (failed(convertVectorToNVVMCompatibleMMASync(rewriter, launch)))
    return launch.emitError("contractions could not become mma.sync");
  // The conversion leaves the replaced vector ops behind, dead, and the
  // stage loop still carrying the replaced accumulators (each yielding its
  // loop-invariant initial value), which the pipeliner below cannot take:
  // the loop's canonicalization drops them.
  RewritePatternSet cleanup(context);
  scf::ForOp::getCanonicalizationPatterns(cleanup, context);
  (void)applyPatternsGreedily(launch, std::move(cleanup));
  WalkResult left = launch.walk([&](vector::ContractionOp contract) {
    contract.emitError("a contraction the mma.sync lowering did not take "
                       "(operands must be 2-D reads of shared memory "
                       "unrolled to 16x8x16)");
    return WalkResult::interrupt();
  });
  if (left.wasInterrupted())
    return failure();
  swizzleSharedTiles(launch);
  if (bf16) {
    SmallVector<nvgpu::MmaSyncOp> mmas;
    launch.walk([&](nvgpu::MmaSyncOp mma) { mmas.push_back(mma); });
    for (nvgpu::MmaSyncOp mma : mmas)
      if (failed(emitBf16MmaSync(mma, rewriter)))
        return failure();
  }
  return prefetchStageLoads(launch);
}

struct GpuVectorToMmaPass
    : ke::impl::GpuVectorToMmaPassBase<GpuVectorToMmaPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp launch) {
      if (launch.walk([](vector::ContractionOp) {
                  return WalkResult::interrupt();
                }).wasInterrupted())
        launches.push_back(launch);
    });
    for (gpu::LaunchOp launch : launches)
      if (failed(convertLaunch(launch)))
        return signalPassFailure();
  }
};

} // namespace

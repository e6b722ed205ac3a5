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
// resulting mma.sync is then emitted as nvvm.mma.sync with bf16 operands;
// the tiles get their bf16 type back after. On the way, the cooperative
// copies become 16-byte row loads and stores, the shared tiles are
// swizzled, and the accumulators start from the fill's constant. The stage
// loop is pipelined by the next step, ke-gpu-pipeline-stage-copies.
//
//===----------------------------------------------------------------------===//

#include "GpuMemory.h"
#include "GpuMmaEpilogue.h"

#include "ke/Codegen/Passes.h"

#include "mlir/Conversion/VectorToGPU/VectorToGPU.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/NVGPU/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
LogicalResult retypeBf16SharedTiles(gpu::LaunchOp launch,
                                    SmallVectorImpl<memref::AllocOp> &allocs) {
  launch.walk([&](memref::AllocOp alloc) {
    if (alloc.getType().getElementType().isBF16())
      allocs.push_back(alloc);
  });
  OpBuilder builder(launch.getContext());
  for (memref::AllocOp alloc : allocs) {
    for (Operation *user : alloc->getUsers()) {
      auto transfer = dyn_cast<VectorTransferOpInterface>(user);
      auto store = dyn_cast<vector::StoreOp>(user);
      if (!(transfer && transfer.getBase() == alloc.getResult()) &&
          !(store && store.getBase() == alloc.getResult()))
        return user->emitError("a bf16 shared tile of a tensor-core "
                               "contraction has a use other than a vector "
                               "transfer or store");
    }
    alloc.getResult().setType(cast<MemRefType>(asF16(alloc.getType())));
    for (Operation *user : llvm::to_vector(alloc->getUsers())) {
      builder.setInsertionPoint(user);
      if (auto store = dyn_cast<vector::StoreOp>(user)) {
        Value bits = arith::BitcastOp::create(builder, store.getLoc(),
                                              asF16(store.getVectorType()),
                                              store.getValueToStore());
        store.getValueToStoreMutable().assign(bits);
        continue;
      }
      if (auto write = dyn_cast<vector::TransferWriteOp>(user)) {
        Value bits = arith::BitcastOp::create(builder, write.getLoc(),
                                              asF16(write.getVectorType()),
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

/// After the conversion, gives the retyped tiles back their bf16 type, so
/// that each copy into them is again a bf16 load and store of the same
/// bits (what cp.async needs, ke-gpu-pipeline-stage-copies): the stores'
/// bitcasts are dropped, the ldmatrix loads and the fragment rows taken
/// from them become bf16 (the mma.sync operands are their bits as i32).
LogicalResult retypeSharedTilesToBf16(ArrayRef<memref::AllocOp> allocs) {
  for (memref::AllocOp alloc : allocs) {
    Type bf16 = BFloat16Type::get(alloc.getContext());
    MemRefType type = alloc.getType();
    alloc.getResult().setType(MemRefType::get(
        type.getShape(), bf16, type.getLayout(), type.getMemorySpace()));
    for (Operation *user : llvm::to_vector(alloc->getUsers())) {
      if (auto store = dyn_cast<vector::StoreOp>(user)) {
        auto bits = store.getValueToStore().getDefiningOp<arith::BitcastOp>();
        if (!bits || !getElementTypeOrSelf(bits.getIn().getType()).isBF16())
          return store.emitError("a bf16 shared tile's store lost its value");
        store.getValueToStoreMutable().assign(bits.getIn());
        continue;
      }
      auto load = dyn_cast<nvgpu::LdMatrixOp>(user);
      if (!load)
        return user->emitError("a bf16 shared tile has a use other than "
                               "stores and ldmatrix after the conversion");
      load.getResult().setType(load.getType().clone(bf16));
      for (Operation *row : load->getUsers()) {
        auto extract = dyn_cast<vector::ExtractOp>(row);
        if (!extract || !llvm::all_of(extract->getUsers(), [](Operation *u) {
              return isa<LLVM::BitcastOp>(u);
            }))
          return row->emitError("an ldmatrix of a bf16 tile feeds something "
                                "other than mma.sync operands");
        extract.getResult().setType(
            cast<VectorType>(extract.getType()).clone(bf16));
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
      rewriter.getContext(),
      SmallVector<Type>(c.size(), rewriter.getF32Type()));
  Value result = NVVM::MmaOp::create(
      rewriter, loc, resultType, a, b, c, ArrayRef<int64_t>{16, 8, 16},
      /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> elements;
  for (int64_t i = 0, e = c.size(); i < e; ++i)
    elements.push_back(LLVM::ExtractValueOp::create(rewriter, loc, result, i));
  rewriter.replaceOpWithNewOp<vector::FromElementsOp>(mma, cType, elements);
  return success();
}

/// True for a transfer of a cooperative copy into shared memory: a write
/// to workgroup memory, or a read of global memory that only such writes
/// use.
bool isSharedCopyTransfer(Operation *op) {
  auto writesShared = [](Operation *user) {
    auto write = dyn_cast<vector::TransferWriteOp>(user);
    return write && ke::isWorkgroupMemref(write.getBase().getType());
  };
  if (writesShared(op))
    return true;
  auto read = dyn_cast<vector::TransferReadOp>(op);
  return read && !ke::isWorkgroupMemref(read.getBase().getType()) &&
         !read->use_empty() && llvm::all_of(read->getUsers(), writesShared);
}

/// The cooperative copies into shared memory become rows of at most 16
/// bytes, each a vector.load of global memory and a vector.store of shared
/// memory: what the swizzle below takes (loads and stores, no 2-D
/// transfers), and what cp.async is made of (ke-gpu-pipeline-stage-copies).
/// The contractions' reads of shared memory stay 2-D (ldmatrix).
void lowerCopiesToRows(gpu::LaunchOp launch) {
  MLIRContext *context = launch.getContext();
  // Rows of at most 16 bytes: the swizzle permutes 16-byte columns, and a
  // wider access would straddle two.
  auto rowShape = [](Operation *op) -> std::optional<SmallVector<int64_t>> {
    VectorType type = cast<VectorTransferOpInterface>(op).getVectorType();
    SmallVector<int64_t> shape(type.getRank(), 1);
    shape.back() = std::min<int64_t>(type.getShape().back(),
                                     128 / type.getElementTypeBitWidth());
    return shape;
  };
  // The reads first (a read's users stop being the copy's writes once
  // those are unrolled), then the writes, whose rows then fold to the
  // rows read.
  for (bool reads : {true, false}) {
    RewritePatternSet rows(context);
    vector::populateVectorUnrollPatterns(
        rows, vector::UnrollVectorOptions()
                  .setFilterConstraint([reads](Operation *op) {
                    return success(isSharedCopyTransfer(op) &&
                                   isa<vector::TransferReadOp>(op) == reads &&
                                   cast<VectorTransferOpInterface>(op)
                                           .getVectorType()
                                           .getRank() > 1);
                  })
                  .setNativeShapeFn(rowShape));
    if (!reads) {
      vector::populateCastAwayVectorLeadingOneDimPatterns(rows);
      vector::populateVectorTransferLoweringPatterns(rows,
                                                     /*maxTransferRank=*/1);
    }
    (void)applyPatternsGreedily(launch, std::move(rows));
  }
}

/// Swizzles the shared tiles of `launch` against bank conflicts: the eight
/// rows an ldmatrix phase reads lie a row of the tile apart, 64 or 256
/// bytes, so unswizzled they hit the same four banks. Upstream's
/// optimizeSharedMemoryReadsAndWrites XORs each access's 16-byte column
/// with its row (the copies' stores and the ldmatrix loads alike). A tile
/// it refuses keeps its layout (a slower kernel, not a wrong one).
void swizzleSharedTiles(gpu::LaunchOp launch) {
  SmallVector<memref::AllocOp> allocs;
  launch.walk([&](memref::AllocOp alloc) {
    if (ke::isWorkgroupMemref(alloc.getResult().getType()))
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

/// The constant splat `write` stores, or null.
Attribute splatWritten(vector::TransferWriteOp write) {
  DenseElementsAttr value;
  if (!matchPattern(write.getVector(), m_Constant(&value)) || !value.isSplat())
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
    if (!ke::isWorkgroupMemref(read.getBase().getType()) && !read.getMask())
      reads.push_back(read);
  });
  OpBuilder builder(launch.getContext());
  for (vector::TransferReadOp read : reads) {
    Value readRoot = ke::getMemrefRoot(read.getBase());
    // Whether a write to `written` may touch the read's buffer.
    auto mayAlias = [&](Value written) {
      Value root = ke::getMemrefRoot(written);
      return root == readRoot || !ke::isDistinctBuffer(root) ||
             !ke::isDistinctBuffer(readRoot);
    };
    vector::TransferWriteOp source;
    for (Operation *op = read->getPrevNode(); op && !source;
         op = op->getPrevNode()) {
      if (isa<gpu::BarrierOp>(op) || isMemoryEffectFree(op))
        continue;
      auto write = dyn_cast<vector::TransferWriteOp>(op);
      if (write && write.getBase() == read.getBase()) {
        // Other tiles of the buffer may be written in between, with the
        // same constant.
        if (!splatWritten(write) || write.getMask())
          break;
        if (sameTransferTile(write, read))
          source = write;
        continue;
      }
      // Reads, and writes of other buffers (the copies into shared memory
      // where the stage loop has one iteration and is gone), change
      // nothing the read reads.
      if (ke::mayWriteMemory(op, mayAlias))
        break;
    }
    auto constant = source
                        ? source.getVector().getDefiningOp<arith::ConstantOp>()
                        : arith::ConstantOp();
    if (!constant || source.getVectorType() != read.getVectorType())
      continue;
    builder.setInsertionPoint(read);
    read.getResult().replaceAllUsesWith(builder.clone(*constant)->getResult(0));
    read->erase();
  }
  SmallVector<vector::TransferWriteOp> fills;
  launch.walk([&](vector::TransferWriteOp write) {
    if (splatWritten(write) &&
        !ke::isWorkgroupMemref(write.getBase().getType()))
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
        overwritten =
            later != fill && !later.getMask() && sameTransferTile(later, fill);
    if (overwritten)
      fill->erase();
  }
}

/// Starts each stage of `loop` from a zero accumulator and adds the
/// stage's sum to the carried one with an f32 add: the tensor cores add
/// into their accumulator truncating (a bias of about 2^-24 of it per
/// mma.sync, which over the 1536 mma.sync of a 4096-deep 3xTF32 product
/// reached 2.9e-5); the carried sum then takes one round-to-nearest add
/// per stage. An iter_arg is split only where it feeds a chain of
/// mma.sync accumulators (each one's only user the next) that the loop
/// yields.
void splitStageAccumulators(scf::ForOp loop) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (BlockArgument carried : loop.getRegionIterArgs()) {
    if (!carried.hasOneUse())
      continue;
    auto first = dyn_cast<nvgpu::MmaSyncOp>(*carried.getUsers().begin());
    if (!first || first.getMatrixC() != carried)
      continue;
    Value end = first.getResult();
    while (end.hasOneUse()) {
      auto next = dyn_cast<nvgpu::MmaSyncOp>(*end.getUsers().begin());
      if (!next || next.getMatrixC() != end)
        break;
      end = next.getResult();
    }
    unsigned index = carried.getArgNumber() - loop.getNumInductionVars();
    if (!end.hasOneUse() || *end.getUsers().begin() != yield ||
        yield.getOperand(index) != end)
      continue;
    OpBuilder builder(first);
    Value zero = arith::ConstantOp::create(
        builder, first.getLoc(), builder.getZeroAttr(carried.getType()));
    first.getMatrixCMutable().assign(zero);
    builder.setInsertionPoint(yield);
    Value sum = arith::AddFOp::create(builder, yield.getLoc(), carried, end);
    yield.setOperand(index, sum);
  }
}

/// Makes the f32 mma.sync ops of `launch` (upstream's conversion leaves
/// m16n8k8 f32 ones) TF32 where `allowTF32`; an error where not, since
/// TF32 changes the numerics of an f32 contraction.
LogicalResult lowerF32MmaSync(gpu::LaunchOp launch, bool allowTF32,
                              bool tf32x3) {
  SmallVector<nvgpu::MmaSyncOp> f32;
  launch.walk([&](nvgpu::MmaSyncOp mma) {
    if (getElementTypeOrSelf(mma.getMatrixA().getType()).isF32())
      f32.push_back(mma);
  });
  if (f32.empty())
    return success();
  if (!allowTF32)
    return f32.front().emitError(
        "an f32 contraction on tensor cores runs in TF32, which the target "
        "does not allow (name it cuda:sm_NN+tf32, or --allow-tf32)");
  if (!tf32x3) {
    RewritePatternSet patterns(launch.getContext());
    nvgpu::populateMmaSyncF32ToTF32Patterns(patterns,
                                            nvgpu::MmaSyncF32Lowering::TF32);
    return applyPatternsGreedily(launch, std::move(patterns));
  }
  // Upstream's TF32x3 lowering is not implemented in MLIR 22; ke's: each
  // operand x = hi + lo with hi its top 10 mantissa bits (a mask: exact)
  // and lo = x - hi (exact in f32, which the tensor core then truncates to
  // 10 bits: an error of at most 2^-20 |x|), and a*b = hi*hi + hi*lo +
  // lo*hi (lo*lo, below 2^-20 |a*b|, dropped), the small products first.
  OpBuilder builder(launch.getContext());
  for (nvgpu::MmaSyncOp mma : f32) {
    builder.setInsertionPoint(mma);
    Location loc = mma.getLoc();
    auto split = [&](Value x) -> std::pair<Value, Value> {
      auto type = cast<VectorType>(x.getType());
      VectorType bitsType = type.clone(builder.getI32Type());
      Value bits = arith::BitcastOp::create(builder, loc, bitsType, x);
      Value mask = arith::ConstantOp::create(
          builder, loc,
          DenseElementsAttr::get(bitsType,
                                 builder.getI32IntegerAttr(0xffffe000)));
      Value hi = arith::BitcastOp::create(
          builder, loc, type, arith::AndIOp::create(builder, loc, bits, mask));
      Value lo = arith::SubFOp::create(builder, loc, x, hi);
      return {hi, lo};
    };
    auto [aHi, aLo] = split(mma.getMatrixA());
    auto [bHi, bLo] = split(mma.getMatrixB());
    auto shape = mma.getMmaShapeAsArray();
    Value acc = mma.getMatrixC();
    for (auto [a, b] : {std::make_pair(aLo, bHi), std::make_pair(aHi, bLo),
                        std::make_pair(aHi, bHi)})
      acc = nvgpu::MmaSyncOp::create(builder, loc, a, b, acc, shape,
                                     /*tf32Enabled=*/true);
    mma.getResult().replaceAllUsesWith(acc);
    mma.erase();
  }
  launch.walk([](scf::ForOp loop) { splitStageAccumulators(loop); });
  return success();
}

/// Converts the contractions of one launch; fails with a diagnostic.
LogicalResult convertLaunch(gpu::LaunchOp launch, bool allowTF32,
                            bool tf32x3) {
  bool bf16 = false;
  launch.walk([&](vector::ContractionOp contract) {
    bf16 |= hasBf16Operands(contract);
  });
  forwardAccumulatorFills(launch);
  if (failed(ke::distributeMmaEpilogues(launch)))
    return failure();
  lowerCopiesToRows(launch);
  SmallVector<memref::AllocOp> retyped;
  if (bf16 && failed(retypeBf16SharedTiles(launch, retyped)))
    return failure();
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
  // loop-invariant initial value), which the scf pipeliner (the next step,
  // ke-gpu-pipeline-stage-copies) cannot take: the loop's canonicalization
  // drops them.
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
  if (failed(ke::forwardMmaEpilogueTiles(launch)) ||
      failed(lowerF32MmaSync(launch, allowTF32, tf32x3)))
    return failure();
  swizzleSharedTiles(launch);
  if (bf16) {
    SmallVector<nvgpu::MmaSyncOp> mmas;
    launch.walk([&](nvgpu::MmaSyncOp mma) { mmas.push_back(mma); });
    for (nvgpu::MmaSyncOp mma : mmas)
      if (failed(emitBf16MmaSync(mma, rewriter)))
        return failure();
    if (failed(retypeSharedTilesToBf16(retyped)))
      return failure();
  }
  return success();
}

struct GpuVectorToMmaPass
    : ke::impl::GpuVectorToMmaPassBase<GpuVectorToMmaPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches, built;
    getOperation().walk([&](gpu::LaunchOp launch) {
      if (launch
              .walk(
                  [](vector::ContractionOp) { return WalkResult::interrupt(); })
              .wasInterrupted())
        launches.push_back(launch);
      else if (launch
                   .walk([](nvgpu::MmaSyncOp mma) {
                     return mma.getTf32Enabled() ? WalkResult::advance()
                                                 : WalkResult::interrupt();
                   })
                   .wasInterrupted())
        built.push_back(launch);
    });
    for (gpu::LaunchOp launch : launches)
      if (failed(convertLaunch(launch, allowTF32, tf32x3)))
        return signalPassFailure();
    // Kernels built with f32 mma.sync already (gpu.ffma's mma variant):
    // only TF32 or 3xTF32 to choose, as for the converted ones.
    for (gpu::LaunchOp launch : built)
      if (failed(lowerF32MmaSync(launch, allowTF32, tf32x3)))
        return signalPassFailure();
  }
};

} // namespace

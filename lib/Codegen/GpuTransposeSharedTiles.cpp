//===- GpuTransposeSharedTiles.cpp - Shared tiles in the order they are read //
//
// ke-gpu-transpose-shared-tiles (ke/Codegen/Passes.td), a step of the GPU
// lowering.
//
// A contraction that reads an operand with the reduction dimension
// innermost in memory (nn.Linear's weight: B as (n, k)) stages it in shared
// memory in that order, [n][k]. Each thread then reads a [rows x kvec]
// block of it and transposes it in registers to feed its outer products:
// the threads of a warp read rows `tile` apart, kblock x 4 bytes each, all
// in the same banks. On an H200 that made the transposed-B matmul 2.7x
// slower than the plain one. Storing the tile as [k][n] instead makes the
// reads the plain matmul's (contiguous along n, conflict-free); the
// cooperative copy into it writes scalars across rows instead, once per
// stage.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-gpu-transpose-shared-tiles"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_GPUTRANSPOSESHAREDTILESPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// The most rows one write of a transposed tile may store (see addWrite).
constexpr int64_t kMaxTransposedRows = 4;

/// The permutation that swaps the last two of `rank` dimensions.
SmallVector<int64_t> swapLastTwo(int64_t rank) {
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

/// `values` (shape, indices, offsets) with the last two swapped.
template <typename Range> auto swapped(Range &&values) {
  auto result = llvm::to_vector(values);
  std::swap(result[result.size() - 1], result[result.size() - 2]);
  return result;
}

bool isWorkgroup(MemRefType type) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

/// A plain transfer: identity map, in bounds, no mask, a vector of the
/// memref's rank.
bool isPlainTransfer(VectorTransferOpInterface op) {
  return !op.getMask() && op.getPermutationMap().isMinorIdentity() &&
         op.getVectorType().getRank() == op.getShapedType().getRank() &&
         llvm::all_of(op.getInBoundsValues(), [](bool b) { return b; });
}

/// True when every use of the read's value transposes its last two
/// dimensions, possibly after dropping leading unit dimensions with
/// vector.extract (a batch matmul's 1 x rows x kvec read).
bool isReadTransposed(Value value) {
  if (value.use_empty())
    return false;
  for (Operation *user : value.getUsers()) {
    if (auto extract = dyn_cast<vector::ExtractOp>(user)) {
      auto source = cast<VectorType>(extract.getSource().getType());
      auto result = dyn_cast<VectorType>(extract.getType());
      if (!result || result.getRank() < 2 || !extract.getDynamicPosition().empty() ||
          llvm::any_of(source.getShape().take_front(source.getRank() -
                                                     result.getRank()),
                       [](int64_t d) { return d != 1; }) ||
          !isReadTransposed(extract.getResult()))
        return false;
      continue;
    }
    auto transpose = dyn_cast<vector::TransposeOp>(user);
    if (!transpose ||
        transpose.getPermutation() !=
            ArrayRef<int64_t>(swapLastTwo(transpose.getPermutation().size())))
      return false;
  }
  return true;
}

/// The accesses of one shared tile: reads of the whole rank, writes
/// directly or through unit-stride subviews of the same rank.
struct TileAccesses {
  SmallVector<vector::TransferReadOp> reads;
  SmallVector<vector::TransferWriteOp> writes;
  SmallVector<memref::SubViewOp> subviews;
};

/// The accesses of `alloc` when they are all of the kinds TileAccesses
/// holds and every read is transposed; none otherwise.
std::optional<TileAccesses> collectAccesses(memref::AllocOp alloc) {
  TileAccesses accesses;
  auto addWrite = [&](Operation *user, Value memref) {
    auto write = dyn_cast<vector::TransferWriteOp>(user);
    if (!write || write.getBase() != memref || !isPlainTransfer(write))
      return false;
    // A few row segments per write (the vector-wide cooperative copy: 1 or
    // 2 rows of 4 in the GEMMs), transposed in registers into short
    // columns. A thread's copy of many rows is left alone: a matvec's
    // 16 x 4 copy, transposed, spilled.
    ArrayRef<int64_t> shape = write.getVectorType().getShape();
    int64_t rows = 1;
    for (int64_t d : shape.drop_back())
      rows *= d;
    if (rows > kMaxTransposedRows)
      return false;
    accesses.writes.push_back(write);
    return true;
  };
  for (Operation *user : alloc->getUsers()) {
    if (auto read = dyn_cast<vector::TransferReadOp>(user)) {
      if (!isPlainTransfer(read) || !isReadTransposed(read.getResult()))
        return std::nullopt;
      accesses.reads.push_back(read);
      continue;
    }
    if (auto subview = dyn_cast<memref::SubViewOp>(user)) {
      if (subview.getType().getRank() != alloc.getType().getRank() ||
          !llvm::all_of(subview.getStaticStrides(),
                        [](int64_t s) { return s == 1; }))
        return std::nullopt;
      for (Operation *subUser : subview->getUsers())
        if (!addWrite(subUser, subview.getResult()))
          return std::nullopt;
      accesses.subviews.push_back(subview);
      continue;
    }
    if (!addWrite(user, alloc.getResult()))
      return std::nullopt;
  }
  if (accesses.reads.empty() || accesses.writes.empty())
    return std::nullopt;
  return accesses;
}

/// Replaces the uses of `value` (a read in the old order) by `transposed`
/// (the same values, last two dimensions swapped): each transpose of the
/// last two dimensions becomes `transposed` itself, and leading-unit
/// extracts are redone on it.
void replaceTransposedUses(RewriterBase &rewriter, Value value,
                           Value transposed) {
  for (Operation *user : llvm::make_early_inc_range(value.getUsers())) {
    if (auto transpose = dyn_cast<vector::TransposeOp>(user)) {
      rewriter.replaceOp(transpose, transposed);
      continue;
    }
    auto extract = cast<vector::ExtractOp>(user);
    rewriter.setInsertionPoint(extract);
    Value inner = vector::ExtractOp::create(rewriter, extract.getLoc(),
                                            transposed,
                                            extract.getStaticPosition());
    replaceTransposedUses(rewriter, extract.getResult(), inner);
    rewriter.eraseOp(extract);
  }
}

void transposeTile(RewriterBase &rewriter, memref::AllocOp alloc,
                   const TileAccesses &accesses) {
  MemRefType type = alloc.getType();
  int64_t rank = type.getRank();
  SmallVector<int64_t> perm = swapLastTwo(rank);
  rewriter.setInsertionPoint(alloc);
  auto newType =
      MemRefType::get(swapped(type.getShape()), type.getElementType(),
                      MemRefLayoutAttrInterface(), type.getMemorySpace());
  auto newAlloc = memref::AllocOp::create(rewriter, alloc.getLoc(), newType,
                                          alloc.getAlignmentAttr());

  for (vector::TransferReadOp read : accesses.reads) {
    rewriter.setInsertionPoint(read);
    VectorType vectorType = read.getVectorType();
    auto newVectorType = VectorType::get(swapped(vectorType.getShape()),
                                         vectorType.getElementType());
    Value newRead = vector::TransferReadOp::create(
        rewriter, read.getLoc(), newVectorType, newAlloc.getResult(),
        swapped(read.getIndices()), read.getPadding(),
        SmallVector<bool>(rank, true));
    replaceTransposedUses(rewriter, read.getResult(), newRead);
    rewriter.eraseOp(read);
  }

  // Writes into a subview are redone into the swapped subview.
  DenseMap<Value, Value> newBase;
  newBase[alloc.getResult()] = newAlloc.getResult();
  for (memref::SubViewOp subview : accesses.subviews) {
    rewriter.setInsertionPoint(subview);
    auto newSubview = memref::SubViewOp::create(
        rewriter, subview.getLoc(), newAlloc.getResult(),
        swapped(subview.getMixedOffsets()),
        swapped(subview.getMixedSizes()),
        subview.getMixedStrides());
    newBase[subview.getResult()] = newSubview.getResult();
  }
  for (vector::TransferWriteOp write : accesses.writes) {
    rewriter.setInsertionPoint(write);
    Value transposed = vector::TransposeOp::create(
        rewriter, write.getLoc(), write.getVector(), perm);
    vector::TransferWriteOp::create(
        rewriter, write.getLoc(), transposed, newBase.lookup(write.getBase()),
        swapped(write.getIndices()),
        SmallVector<bool>(rank, true));
    rewriter.eraseOp(write);
  }
  for (memref::SubViewOp subview : accesses.subviews)
    rewriter.eraseOp(subview);
  rewriter.eraseOp(alloc);
}

struct GpuTransposeSharedTilesPass
    : ke::impl::GpuTransposeSharedTilesPassBase<GpuTransposeSharedTilesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation()->walk([&](memref::AllocOp alloc) {
      MemRefType type = alloc.getType();
      if (isWorkgroup(type) && type.getRank() >= 2 &&
          type.hasStaticShape() && type.getLayout().isIdentity() &&
          alloc->getParentOfType<gpu::LaunchOp>())
        allocs.push_back(alloc);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocOp alloc : allocs) {
      std::optional<TileAccesses> accesses = collectAccesses(alloc);
      if (!accesses)
        continue;
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] transposing " << alloc
                              << "\n");
      transposeTile(rewriter, alloc, *accesses);
    }
  }
};

} // namespace

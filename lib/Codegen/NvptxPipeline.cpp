//===- NvptxPipeline.cpp - From a scheduled kernel to PTX and a cubin -----===//
//
// See ke/Codegen/GpuPipeline.h for the steps. The pass list after outlining
// is the one verified for MLIR 22 (../shared/notes/mlir22-verified.md), with
// vector transfers fully unrolled (no stack temporaries in kernels).
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/GpuPipeline.h"

#include "ExternalTool.h"
#include "GpuLaunches.h"
#include "GpuBarriers.h"
#include "GpuReductions.h"

#include "ke/Codegen/Passes.h"
#include "ke/Codegen/PipelineHash.h"
#include "ke/Codegen/RocdlPipeline.h"

#include "ke/Config.h"
#include "ke/Workload/Kernel.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SHA256.h"

#include <cstdlib>

using namespace mlir;
using namespace ke;

/// The device passes up to the LLVM dialect; then the kernels' pointer
/// parameters get their alignment (annotateKernelPointerAlignment) and
/// getSerializePasses makes PTX.
static PassPipeline getNvvmLoweringPasses(const TargetDescription &target) {
  std::string chip = target.chip, features = target.features;
  PassPipeline passes;
  passes.push_back({[] { return createConvertLinalgToLoopsPass(); }});
  passes.push_back({[] { return createSCFToControlFlowPass(); }});
  // expand-strided-metadata before lower-affine, or translation fails on
  // unrealized casts.
  passes.push_back({[] { return memref::createExpandStridedMetadataPass(); }});
  passes.push_back({[] { return createLowerAffinePass(); }});
  passes.push_back({[chip, features] {
    GpuNVVMAttachTargetOptions attach;
    attach.chip = chip;
    attach.features = features;
    attach.optLevel = 3;
    return createGpuNVVMAttachTarget(attach);
  }});
  passes.push_back(
      {[] { return createConvertGpuOpsToNVVMOps(); }, "gpu.module"});
  passes.push_back({[] { return createReconcileUnrealizedCastsPass(); }});
  return passes;
}

/// Serialization to PTX. `toolkit` is the CUDA toolkit whose libdevice the
/// serializer links (findCudaToolkit; empty in the pipeline hash, as the
/// ROCm device libraries are: where a toolkit lies is not the lowering).
static PassPipeline getSerializePasses(llvm::StringRef toolkit = "") {
  return {PassStep{[toolkit = toolkit.str()] {
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = "isa";
    binary.toolkitPath = toolkit;
    return createGpuModuleToBinaryPass(binary);
  }}};
}

std::string ke::getNvptxLoweringPipeline(const TargetDescription &target) {
  return printPipeline(getNvvmLoweringPasses(target)) +
         ",align-kernel-pointers," + printPipeline(getSerializePasses());
}

namespace {

/// One step of the GPU lowering (see getGpuLoweringSteps): its text in the
/// pipeline that the pipeline hash covers (printed by the passes for pass
/// steps), the target families it runs for, and what it does.
struct GpuLoweringStep {
  enum Families { AllFamilies, CudaOnly };
  std::string text;
  Families families;
  std::function<LogicalResult(ModuleOp)> run;

  bool appliesTo(TargetFamily family) const {
    return families == AllFamilies || family == TargetFamily::Cuda;
  }
};

/// A step of C++ code, named `text` in the pipeline.
GpuLoweringStep codeStep(std::string text, LogicalResult (*run)(ModuleOp),
                         GpuLoweringStep::Families families =
                             GpuLoweringStep::AllFamilies) {
  return {std::move(text), families, run};
}

/// A step of upstream passes, named by what they print.
GpuLoweringStep passStep(PassPipeline passes) {
  std::string text = printPipeline(passes);
  return {std::move(text), GpuLoweringStep::AllFamilies,
          [passes = std::move(passes)](ModuleOp module) {
            return runPipeline(module, passes);
          }};
}
} // namespace

namespace {

PassPipeline getVectorToScfPasses() {
  return {PassStep{[] {
    return createConvertVectorToSCFPass(
        VectorTransferToSCFOptions().enableFullUnroll());
  }}};
}

/// Vector transfers become scalar loops (more than one dimension, or out of
/// bounds) and vector.load/store (the rest): the NVVM conversion lowers
/// neither transfers nor memrefs outside the default address space itself.
LogicalResult lowerVectorTransfers(ModuleOp module) {
  if (failed(runPipeline(module, getVectorToScfPasses())))
    return failure();
  RewritePatternSet patterns(module.getContext());
  // Transposed and broadcasting reads first become minor-identity ones; n-D
  // broadcasts, transposes and shape casts become 1-D vector ops, which the
  // NVVM conversion handles.
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  vector::populateVectorTransferLoweringPatterns(patterns,
                                                 /*maxTransferRank=*/1);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::EltWise);
  return applyPatternsGreedily(module, std::move(patterns));
}

/// The alignment, in bytes, of every kernel buffer's pointers: ke's
/// runners allocate each buffer on its own with the driver's allocator
/// (cuMemAlloc aligns to 256 bytes) and pass it with offset 0. 16 bytes is
/// what one 128-bit access needs.
constexpr uint64_t kKernelBufferAlignment = 16;

/// The largest power of two (up to 2^20) that provably divides the index
/// value `value`: constants, sums, products and shifts of values, affine
/// maps of them, and scf.for induction variables; thread and block ids and
/// anything else count as 1.
int64_t knownPowerOfTwoFactor(Value value, unsigned depth = 0);

int64_t powerOfTwoFactorOf(int64_t constant) {
  constexpr int64_t kCap = int64_t(1) << 20;
  if (constant == 0)
    return kCap;
  return std::min<int64_t>(kCap, constant & -constant);
}

int64_t knownPowerOfTwoFactor(AffineExpr expr, ValueRange dims,
                              ValueRange symbols, unsigned depth) {
  constexpr int64_t kCap = int64_t(1) << 20;
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return powerOfTwoFactorOf(constant.getValue());
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return knownPowerOfTwoFactor(dims[dim.getPosition()], depth + 1);
  if (auto symbol = dyn_cast<AffineSymbolExpr>(expr))
    return knownPowerOfTwoFactor(symbols[symbol.getPosition()], depth + 1);
  auto binary = cast<AffineBinaryOpExpr>(expr);
  int64_t lhs = knownPowerOfTwoFactor(binary.getLHS(), dims, symbols, depth);
  int64_t rhs = knownPowerOfTwoFactor(binary.getRHS(), dims, symbols, depth);
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return std::min(lhs, rhs);
  case AffineExprKind::Mul:
    return std::min(kCap, lhs * rhs);
  case AffineExprKind::Mod:
    // x mod c = x - c * floor(x / c): a multiple of what divides both.
    return std::min(lhs, rhs);
  default: // floordiv, ceildiv
    return 1;
  }
}

int64_t knownPowerOfTwoFactor(Value value, unsigned depth) {
  constexpr int64_t kCap = int64_t(1) << 20;
  if (depth > 16)
    return 1;
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return powerOfTwoFactorOf(*constant);
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (loop && arg == loop.getInductionVar())
      return std::min(knownPowerOfTwoFactor(loop.getLowerBound(), depth + 1),
                      knownPowerOfTwoFactor(loop.getStep(), depth + 1));
    return 1;
  }
  Operation *def = value.getDefiningOp();
  if (auto apply = dyn_cast<affine::AffineApplyOp>(def)) {
    AffineMap map = apply.getAffineMap();
    return knownPowerOfTwoFactor(map.getResult(0), apply.getDimOperands(),
                                 apply.getSymbolOperands(), depth);
  }
  if (isa<arith::AddIOp, arith::SubIOp>(def))
    return std::min(knownPowerOfTwoFactor(def->getOperand(0), depth + 1),
                    knownPowerOfTwoFactor(def->getOperand(1), depth + 1));
  if (isa<arith::MulIOp>(def))
    return std::min(kCap,
                    knownPowerOfTwoFactor(def->getOperand(0), depth + 1) *
                        knownPowerOfTwoFactor(def->getOperand(1), depth + 1));
  if (isa<arith::ShLIOp>(def))
    if (std::optional<int64_t> shift = getConstantIntValue(def->getOperand(1));
        shift && *shift >= 0 && *shift < 20)
      return std::min(kCap,
                      knownPowerOfTwoFactor(def->getOperand(0), depth + 1)
                          << *shift);
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
    return knownPowerOfTwoFactor(def->getOperand(0), depth + 1);
  return 1;
}

/// The largest power of two known to divide the element offset of `memref`
/// from the start of its buffer, for views of a kernel argument (offset 0);
/// 0 when the view or its buffer is anything else.
int64_t knownOffsetFactor(Value memref, unsigned depth = 0) {
  constexpr int64_t kCap = int64_t(1) << 20;
  if (depth > 16)
    return 0;
  if (auto arg = dyn_cast<BlockArgument>(memref)) {
    auto func = dyn_cast<gpu::GPUFuncOp>(arg.getOwner()->getParentOp());
    if (!func || arg.getOwner() != &func.getBody().front() ||
        arg.getArgNumber() >= func.getNumArguments())
      return 0; // attributions and loop-carried views
    auto type = dyn_cast<MemRefType>(memref.getType());
    return type && type.getLayout().isIdentity() ? kCap : 0;
  }
  Operation *def = memref.getDefiningOp();
  if (auto cast = dyn_cast_or_null<memref::CastOp>(def))
    return knownOffsetFactor(cast.getSource(), depth + 1);
  if (auto assumed = dyn_cast_or_null<memref::AssumeAlignmentOp>(def))
    return knownOffsetFactor(assumed.getMemref(), depth + 1);
  auto subview = dyn_cast_or_null<memref::SubViewOp>(def);
  if (!subview)
    return 0;
  int64_t factor = knownOffsetFactor(subview.getSource(), depth + 1);
  if (factor == 0)
    return 0;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(subview.getSourceType().getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return 0;
  for (auto [ofr, stride] : llvm::zip(subview.getMixedOffsets(), strides)) {
    int64_t part = isa<Attribute>(ofr)
                       ? powerOfTwoFactorOf(*getConstantIntValue(ofr))
                       : knownPowerOfTwoFactor(cast<Value>(ofr));
    factor = std::min({factor, kCap, part * powerOfTwoFactorOf(stride)});
  }
  return factor;
}

/// Gives vector loads and stores on kernel buffers the alignment their
/// indices prove: the buffer's 16-byte alignment (kKernelBufferAlignment)
/// times the power of two dividing the element offset, as far as it goes.
/// A 128-bit vector access at a multiple of four f32 elements becomes one
/// ld.global.v4 / st.global.v4 even where LLVM's own analysis gives up
/// (deep address arithmetic); other accesses keep element alignment and
/// are split into scalars.
template <typename OpTy>
void annotateAccessAlignment(OpTy op) {
  auto type = cast<MemRefType>(op.getBase().getType());
  unsigned elementBytes =
      std::max(1u, unsigned(type.getElementTypeBitWidth() / 8));
  int64_t factor = knownOffsetFactor(op.getBase());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (factor == 0 || failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return;
  for (auto [index, stride] : llvm::zip(op.getIndices(), strides))
    factor = std::min(factor, knownPowerOfTwoFactor(index) *
                                  powerOfTwoFactorOf(stride));
  uint64_t alignment =
      std::min<uint64_t>(kKernelBufferAlignment, factor * elementBytes);
  if (alignment > elementBytes &&
      alignment > op.getAlignment().value_or(0))
    op.setAlignment(alignment);
}

void annotateVectorAlignment(ModuleOp module) {
  module.walk([](gpu::GPUFuncOp func) {
    func.walk([](Operation *op) {
      if (auto load = dyn_cast<vector::LoadOp>(op))
        annotateAccessAlignment(load);
      else if (auto store = dyn_cast<vector::StoreOp>(op))
        annotateAccessAlignment(store);
    });
  });
}

/// Marks every pointer parameter of every kernel (the allocated and aligned
/// pointers of its memref descriptors) `llvm.align = 16`. LLVM's alignment
/// inference then proves 128-bit alignment for exactly those vector
/// accesses whose element offset is a multiple of the vector width (the
/// sketches make thread tiles vector-wide along the contiguous dimension),
/// so they become ld.global.v4 / st.global.v4; the others stay scalar.
/// (A memref.assume_alignment does not survive: expand-strided-metadata
/// looks through it and the unused assumption is erased.)
///
/// The pointers the kernel only reads through are also `llvm.noalias`: a
/// kernel's buffer arguments do not overlap (ke's kernel ABI,
/// docs/compile.md), and of a descriptor only the aligned pointer is used.
/// LLVM then knows that neither a barrier nor the kernel's stores change
/// such a buffer, so a thread's second and third read of a row (softmax:
/// max, sum, normalization) reuse the registers of the first instead of
/// going back to L1/L2, and the loads go through the non-coherent cache
/// (ld.global.nc), as nvcc does for `const __restrict__` pointers. Written
/// buffers stay as they were: noalias on them let LLVM keep more values in
/// registers across a matmul's stages, which spilled (ptxas-small).
/// Whether `pointer` is loaded through and never stored through: followed
/// through GEPs, casts and the memref descriptor structs the lowering
/// builds (insertvalue, extractvalue at the same position); any other use
/// counts as a store.
bool isReadOnlyPointer(Value pointer) {
  if (pointer.use_empty())
    return false;
  // A pointer, or a struct holding it at `position`.
  struct Item {
    Value value;
    SmallVector<int64_t> position;
  };
  SmallVector<Item> worklist = {{pointer, {}}};
  while (!worklist.empty()) {
    Item item = worklist.pop_back_val();
    for (OpOperand &use : item.value.getUses()) {
      Operation *user = use.getOwner();
      if (item.position.empty()) {
        if (isa<LLVM::LoadOp>(user))
          continue;
        if (isa<LLVM::GEPOp, LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(user)) {
          worklist.push_back({user->getResult(0), {}});
          continue;
        }
        if (auto insert = dyn_cast<LLVM::InsertValueOp>(user);
            insert && insert.getValue() == item.value) {
          worklist.push_back({insert.getResult(),
                              llvm::to_vector(insert.getPosition())});
          continue;
        }
        return false;
      }
      if (auto insert = dyn_cast<LLVM::InsertValueOp>(user);
          insert && insert.getContainer() == item.value &&
          insert.getValue() != item.value) {
        if (insert.getPosition() != ArrayRef<int64_t>(item.position))
          worklist.push_back({insert.getResult(), item.position});
        continue;
      }
      if (auto extract = dyn_cast<LLVM::ExtractValueOp>(user)) {
        if (extract.getPosition() == ArrayRef<int64_t>(item.position))
          worklist.push_back({extract.getResult(), {}});
        continue;
      }
      return false;
    }
  }
  return true;
}

void annotateKernelPointerAlignment(ModuleOp module) {
  module.walk([](LLVM::LLVMFuncOp func) {
    if (func.isExternal() || !func->getParentOfType<gpu::GPUModuleOp>() ||
        !(func->hasAttr(gpu::GPUDialect::getKernelFuncAttrName()) ||
          func->hasAttr("nvvm.kernel")))
      return;
    Builder builder(func.getContext());
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      auto pointer =
          dyn_cast<LLVM::LLVMPointerType>(func.getArgument(i).getType());
      // Generic (0) or global (1) pointers only: buffers of the kernel.
      if (!pointer || pointer.getAddressSpace() > 1)
        continue;
      func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                      builder.getI64IntegerAttr(kKernelBufferAlignment));
      if (isReadOnlyPointer(func.getArgument(i)))
        func.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                        builder.getUnitAttr());
    }
  });
}

/// The buffer a memref value views: a function (kernel) argument or an
/// allocation, through subviews, casts and alignment assumptions.
Value getMemrefRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      value = view.getViewSource();
      continue;
    }
    if (auto assumed = dyn_cast<memref::AssumeAlignmentOp>(def)) {
      value = assumed.getMemref();
      continue;
    }
    break;
  }
  return value;
}

/// True when `root` is a buffer distinct from every other argument and
/// allocation: an argument of the kernel function (ke's runners allocate
/// each kernel buffer on its own) or an allocation.
bool isDistinctBuffer(Value root) {
  if (auto arg = dyn_cast<BlockArgument>(root))
    return isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
      root.getDefiningOp());
}

/// True when nothing in `loop` other than `read` and `write` may touch the
/// buffer `root` (barriers aside: they order, they do not access).
bool onlyAccessesOfRoot(scf::ForOp loop, Value root, Operation *read,
                        Operation *write) {
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (op == read || op == write || isa<gpu::BarrierOp>(op) ||
        isMemoryEffectFree(op) ||
        op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      Value value = effect.getValue();
      if (!value)
        return WalkResult::interrupt();
      Value other = getMemrefRoot(value);
      if (other == root || !isDistinctBuffer(other))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// The shape of `type` without its leading unit dimensions.
ArrayRef<int64_t> dropLeadingUnits(VectorType type) {
  ArrayRef<int64_t> shape = type.getShape();
  while (!shape.empty() && shape.front() == 1)
    shape = shape.drop_front();
  return shape;
}

/// True when `read` and `write` move the same elements: equal, or (the 1-D
/// convolutions the vectorizer makes of a decomposed 2-D one read their
/// accumulator rank-reduced) minor-identity accesses whose vector shapes
/// differ only in leading unit dimensions.
bool sameTile(vector::TransferReadOp read, vector::TransferWriteOp write) {
  if (write.getVectorType() == read.getVectorType())
    return write.getPermutationMap() == read.getPermutationMap();
  return read.getPermutationMap().isMinorIdentity() &&
         write.getPermutationMap().isMinorIdentity() &&
         read.getVectorType().getElementType() ==
             write.getVectorType().getElementType() &&
         dropLeadingUnits(read.getVectorType()) ==
             dropLeadingUnits(write.getVectorType()) &&
         read.getInBoundsValues() == SmallVector<bool>(
                                         read.getVectorType().getRank(), true) &&
         write.getInBoundsValues() ==
             SmallVector<bool>(write.getVectorType().getRank(), true);
}

/// Keeps a thread's accumulator tile in registers across a loop: a
/// vector.transfer_read at the top of an scf.for's body and a
/// vector.transfer_write of the same tile (same memref value and indices,
/// all defined outside the loop) move out of the loop, the tile becoming
/// an iter_arg. The GPU sketches leave this pattern in the shared-memory
/// stage loop of a contraction (the thread forall sits inside it), where
/// every stage would otherwise read and write the output tile in global
/// memory. Only done when nothing else in the loop touches the tile's
/// buffer and the loop runs at least once; upstream's
/// hoistRedundantVectorTransfers refuses tiles that are subviews.
void hoistAccumulatorTiles(ModuleOp module) {
  SmallVector<scf::ForOp> loops;
  module.walk([&](scf::ForOp loop) {
    if (loop->getParentOfType<gpu::LaunchOp>())
      loops.push_back(loop);
  });
  IRRewriter rewriter(module.getContext());
  for (scf::ForOp loop : loops) {
    moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
    std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()),
                           upper = getConstantIntValue(loop.getUpperBound());
    if (!lower || !upper || *lower >= *upper)
      continue;
    bool changed = true;
    while (changed) {
      changed = false;
      for (Operation &op : *loop.getBody()) {
        auto read = dyn_cast<vector::TransferReadOp>(&op);
        if (!read || read.getMask() || !isa<MemRefType>(read.getShapedType()))
          continue;
        auto invariant = [&](Value v) {
          return !loop->isAncestor(v.getParentBlock()->getParentOp());
        };
        if (!llvm::all_of(read->getOperands(), invariant))
          continue;
        vector::TransferWriteOp write;
        for (Operation &later : llvm::make_range(
                 std::next(Block::iterator(read)), loop.getBody()->end())) {
          auto candidate = dyn_cast<vector::TransferWriteOp>(&later);
          if (candidate && candidate.getBase() == read.getBase() &&
              candidate.getIndices() == read.getIndices() &&
              sameTile(read, candidate) && !candidate.getMask()) {
            write = candidate;
            break;
          }
        }
        if (!write)
          continue;
        Value root = getMemrefRoot(read.getBase());
        if (!isDistinctBuffer(root) ||
            !onlyAccessesOfRoot(loop, root, read, write))
          continue;
        rewriter.setInsertionPoint(loop);
        Operation *hoisted = rewriter.clone(*read);
        FailureOr<LoopLikeOpInterface> grown =
            cast<LoopLikeOpInterface>(loop.getOperation())
                .replaceWithAdditionalYields(
                    rewriter, hoisted->getResult(0),
                    /*replaceInitOperandUsesInLoop=*/false,
                    [&](OpBuilder &b, Location loc, ArrayRef<BlockArgument>) {
                      Value tile = write.getVector();
                      if (tile.getType() != read.getVectorType())
                        tile = vector::ShapeCastOp::create(
                            b, loc, read.getVectorType(), tile);
                      return SmallVector<Value>{tile};
                    });
        if (failed(grown))
          break;
        loop = cast<scf::ForOp>(grown->getOperation());
        rewriter.replaceOp(read, loop.getRegionIterArgs().back());
        rewriter.setInsertionPointAfter(loop);
        write->moveAfter(loop);
        Value result = loop.getResults().back();
        if (result.getType() != write.getVectorType()) {
          rewriter.setInsertionPoint(write);
          result = vector::ShapeCastOp::create(rewriter, write.getLoc(),
                                               write.getVectorType(), result);
        }
        write.getValueToStoreMutable().assign(result);
        changed = true;
        break;
      }
    }
  }
}


} // namespace

/// Whether `root` is a CUDA toolkit with libdevice.
static bool hasLibdevice(llvm::StringRef root) {
  return !root.empty() &&
         llvm::sys::fs::exists(root + "/nvvm/libdevice/libdevice.10.bc");
}

/// The CUDA toolkit whose libdevice resolves math functions (__nv_expf...):
/// $CUDA_HOME, $CUDA_PATH, $CUDA_ROOT, the toolkit of ptxas, /usr/local/cuda,
/// the first that has libdevice; empty when none has. It is handed to the
/// serializer as its toolkit, not through the environment.
static std::string findCudaToolkit() {
  for (const char *name : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (std::optional<std::string> root = llvm::sys::Process::GetEnv(name);
        root && hasLibdevice(*root))
      return *root;
  std::string ptxas = ke::findPtxas();
  if (!ptxas.empty()) {
    llvm::SmallString<128> root(ptxas);
    llvm::sys::path::remove_filename(root); // bin/
    llvm::sys::path::remove_filename(root);
    if (hasLibdevice(root))
      return root.str().str();
  }
  return hasLibdevice("/usr/local/cuda") ? "/usr/local/cuda" : "";
}

/// NVVM lowering turns math ops into calls of CUDA's libdevice (__nv_expf,
/// __nv_rsqrtf...). The serializer links libdevice from the toolkit it is
/// given and otherwise leaves the calls unresolved, PTX that ptxas and the
/// driver reject. A kernel that needs libdevice where there is none is
/// therefore an error here, saying how to get one, not a broken module
/// later (a fresh machine without CUDA met exactly that).
static LogicalResult checkLibdeviceFound(ModuleOp kernel,
                                         llvm::StringRef toolkit) {
  llvm::SetVector<llvm::StringRef> needed;
  kernel.walk([&](LLVM::LLVMFuncOp func) {
    if (func.isExternal() && func.getSymName().starts_with("__nv_"))
      needed.insert(func.getSymName());
  });
  if (needed.empty() || hasLibdevice(toolkit))
    return success();
  return kernel.emitError("the kernel calls CUDA libdevice functions (")
         << llvm::join(needed, ", ")
         << ") but no libdevice was found: set $CUDA_HOME to a CUDA toolkit, "
            "or $KE_PTXAS to the ptxas of one (scripts/fetch-ptxas.sh "
            "installs ptxas with libdevice from pip)";
}

std::string ke::findPtxas() {
  if (std::optional<std::string> path =
          llvm::sys::Process::GetEnv("KE_PTXAS");
      path && !path->empty())
    return *path;
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  return "";
}

llvm::SmallVector<PtxasKernelReport> ke::parsePtxasReport(llvm::StringRef log) {
  llvm::SmallVector<PtxasKernelReport> reports;
  llvm::Regex function("Compiling entry function '([^']+)'");
  llvm::Regex spills("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  llvm::Regex usage("Used ([0-9]+) registers");
  llvm::Regex smem("([0-9]+) bytes smem");
  llvm::SmallVector<llvm::StringRef> lines, m;
  log.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (function.match(line, &m)) {
      reports.push_back({m[1].str()});
      continue;
    }
    if (reports.empty())
      continue;
    PtxasKernelReport &r = reports.back();
    if (spills.match(line, &m)) {
      m[1].getAsInteger(10, r.spillStoreBytes);
      m[2].getAsInteger(10, r.spillLoadBytes);
    }
    if (usage.match(line, &m))
      m[1].getAsInteger(10, r.registers);
    if (smem.match(line, &m))
      m[1].getAsInteger(10, r.sharedMemoryBytes);
  }
  return reports;
}

FailureOr<std::string> ke::assemblePtx(llvm::StringRef ptx,
                                       llvm::StringRef chip,
                                       std::string &log) {
  std::string ptxas = findPtxas();
  if (ptxas.empty()) {
    log = "ptxas not found (set $KE_PTXAS or put ptxas on PATH)";
    return failure();
  }
  ExternalTool tool{ptxas, "ptxas", "ptx", "cubin", "cubin"};
  return runExternalTool(
      tool, ptx,
      [&](llvm::StringRef input, llvm::StringRef output) {
        return llvm::SmallVector<std::string>{
            ptxas, ("-arch=" + chip).str(), "-v", "-O3", input.str(), "-o",
            output.str()};
      },
      log);
}

/// The steps of the GPU lowering from the scheduled kernel to the device
/// passes, in order. lowerKernelToGpuBinary runs exactly these and
/// getGpuPipelineHash hashes exactly their names, so that a step added,
/// removed or reordered changes the hash by construction (the hand-written
/// list it replaced missed three steps that ran).
static llvm::ArrayRef<GpuLoweringStep> getGpuLoweringSteps() {
  static const std::vector<GpuLoweringStep> steps = [] {
    std::vector<GpuLoweringStep> list;
    // CSE before canonicalization: bufferized thread foralls leave copies
    // between identical subviews, which fold only once CSE made them one
    // value.
    list.push_back(passStep({{[] { return createCSEPass(); }},
                             {[] { return createCanonicalizerPass(); }},
                             {[] { return createCSEPass(); }}}));
    list.push_back(codeStep("hoist-accumulator-tiles", [](ModuleOp m) {
      return hoistAccumulatorTiles(m), success();
    }));
    list.push_back(codeStep("launch-host-combines", [](ModuleOp m) {
      return launchHostCombines(m), success();
    }));
    list.push_back(
        passStep({{[] { return createGpuWrapUnmappedKernelPass(); }}}));
    list.push_back(passStep({{[] { return createGpuCheckMappedPass(); }}}));
    list.push_back(passStep({{[] { return createGpuSinkConstantsPass(); }}}));
    list.push_back(
        passStep({{[] { return createGpuKernelOutliningPass(); }}}));
    list.push_back(passStep({{[] { return createGpuMergeModulesPass(); }}}));
    list.push_back(
        passStep({{[] { return createGpuAllocsToAttributionsPass(); }}}));
    list.push_back(codeStep("lower-vector-transfers{" +
                                printPipeline(getVectorToScfPasses()) + "}",
                            lowerVectorTransfers));
    list.push_back(codeStep("combine-partials-with-all-reduce", [](ModuleOp m) {
      return combinePartialsWithAllReduce(m), success();
    }));
    list.push_back(passStep({{[] { return createGpuHoistBarriersPass(); }}}));
    list.push_back(codeStep(
        "annotate-vector-alignment",
        [](ModuleOp m) { return annotateVectorAlignment(m), success(); },
        GpuLoweringStep::CudaOnly));
    return list;
  }();
  return steps;
}

std::string ke::getGpuPipelineText(const TargetDescription &target) {
  std::string text;
  for (const GpuLoweringStep &step : getGpuLoweringSteps())
    if (step.appliesTo(target.family))
      text += (text.empty() ? "" : ",") + step.text;
  return text + "," +
         (target.family == TargetFamily::Rocm
              ? getRocdlLoweringPipeline(target)
              : getNvptxLoweringPipeline(target));
}

std::string ke::getGpuPipelineHash(const TargetDescription &target) {
  // The chip is part of the target, not of the pipeline's structure.
  TargetDescription generic = target;
  generic.chip = "chip";
  return hashLoweringPipeline(getGpuPipelineText(generic));
}

FailureOr<GpuKernelBinary>
ke::lowerKernelToGpuBinary(ModuleOp kernel, const TargetDescription &target,
                           const GpuLoweringOptions &options) {
  if (!target.isGpu())
    return kernel.emitError("no GPU lowering for target '")
           << target.name << "'";
  for (const GpuLoweringStep &step : getGpuLoweringSteps())
    if (step.appliesTo(target.family) && failed(step.run(kernel)))
      return failure();
  bool rocm = target.family == TargetFamily::Rocm;
  // $KE_DUMP_GPU_MODULE names a file that receives the module as the
  // device passes get it (outlined, attributions, transfers lowered).
  if (std::optional<std::string> dump =
          llvm::sys::Process::GetEnv("KE_DUMP_GPU_MODULE");
      dump && !dump->empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(*dump, ec);
    if (!ec)
      kernel->print(os);
  }
  // The device pass list is the only step that differs for ROCm
  // (RocdlPipeline.cpp), besides assembling and linking below.
  if (rocm) {
    if (failed(runRocdlLowering(kernel, target)))
      return failure();
  } else {
    std::string toolkit = findCudaToolkit();
    if (failed(runPipeline(kernel, getNvvmLoweringPasses(target))) ||
        failed(checkLibdeviceFound(kernel, toolkit)))
      return failure();
    annotateKernelPointerAlignment(kernel);
    if (failed(runPipeline(kernel, getSerializePasses(toolkit))))
      return failure();
  }

  GpuKernelBinary binary;
  FailureOr<std::vector<GpuLaunch>> launches =
      readGpuLaunches(kernel, &binary.scratch);
  if (failed(launches))
    return failure();
  binary.launches = std::move(*launches);
  SmallVector<gpu::BinaryOp> binaries(kernel.getOps<gpu::BinaryOp>());
  if (binaries.size() != 1)
    return kernel.emitError("expected one gpu.binary after serialization, "
                            "got ")
           << binaries.size();
  auto object = dyn_cast<gpu::ObjectAttr>(binaries.front().getObjects()[0]);
  if (!object)
    return kernel.emitError("gpu.binary holds no object");
  binary.assembly = object.getObject().getValue().str();
  if (rocm)
    return finishRocdlBinary(kernel, target, std::move(binary));
  binary.format = "ptx";
  binary.image = binary.assembly;

  if (!options.assemble)
    return binary;
  if (findPtxas().empty()) {
    if (options.requireAssembler)
      return kernel.emitError("ptxas not found (set $KE_PTXAS or put ptxas "
                              "on PATH)");
    return binary;
  }
  std::string log;
  FailureOr<std::string> cubin = assemblePtx(binary.assembly, target.chip, log);
  binary.assemblerLog = log;
  if (failed(cubin))
    return kernel.emitError("ptxas rejected the PTX: ") << log;
  binary.format = "cubin";
  binary.image = std::move(*cubin);
  for (const PtxasKernelReport &report : parsePtxasReport(log)) {
    binary.registers = std::max(binary.registers, report.registers);
    binary.spillStoreBytes += report.spillStoreBytes;
    binary.spillLoadBytes += report.spillLoadBytes;
  }
  return binary;
}

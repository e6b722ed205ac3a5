//===- GpuMmaRule.cpp - Matmuls on tensor cores (mma.sync) ----------------===//
//
// gpu.mma: a 16-bit matmul (f16 or bf16 operands, f32 or f16 result) on
// the tensor cores of sm_80 and later, through mma.sync m16n8k16:
//
//   block tile (block.m x block.n)    scf.forall on #gpu.block
//   stage loop over K (kblock)        A and B tiles copied to shared memory
//                                     by every thread, 16 bytes each
//   warp tile (block / warps)         scf.forall on #gpu.warp
//   instruction tiles 16x8x16         vector.contract, unrolled
//
// The script vectorizes each warp's tile into one contraction, maps the
// foralls, folds the memref views into the transfers, unrolls to the
// instruction shape and leaves the rest to the CUDA lowering: the
// accumulators become the stage loop's iter_args
// (ke-gpu-hoist-accumulator-tiles), the contractions ldmatrix and mma.sync
// (ke-gpu-vector-to-mma). Block tiles must divide the matmul (no partial
// tiles yet), and the kernel must be the matmul alone (with its fill):
// kernels with fused consumers keep gpu.tile. docs/gpu.md has the steps.
//
//===----------------------------------------------------------------------===//

#include "GpuRules.h"
#include "GpuSupport.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ke;

namespace {

/// The mma.sync instruction shape (m16n8k16 for 16-bit operands).
constexpr int64_t kInstrM = 16, kInstrN = 8, kInstrK = 16;
/// Bytes each thread copies to shared memory at a time.
constexpr int64_t kCopyBytes = 16;
/// The largest warp tile: 64x64 f32 accumulators are 128 registers of a
/// thread, half of what one may have.
constexpr int64_t kMaxWarpTileElements = 64 * 64;

/// The CUDA compute capability of `target` (90 for sm_90a), 0 if unknown.
int64_t computeCapability(const TargetDescription &target) {
  StringRef chip = target.chip;
  if (!chip.consume_front("sm_"))
    return 0;
  chip = chip.take_while([](char c) { return llvm::isDigit(c); });
  int64_t value = 0;
  return chip.getAsInteger(10, value) ? 0 : value;
}

/// True when the anchor's kernel holds nothing but it and fills.
bool isAloneInKernel(Operation *anchor) {
  auto func = anchor->getParentOfType<func::FuncOp>();
  if (!func)
    return false;
  return !func.walk([](Operation *op) {
                return op->hasAttr(kConsumerAttr) ||
                               op->hasAttr(kRowReductionAttr)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted();
}

/// True for a matmul whose indexing maps are (m, k), (n, k), (m, n): B
/// stored N x K.
bool hasTransposedB(linalg::MatmulOp op) {
  MLIRContext *context = op.getContext();
  AffineExpr m, n, k;
  bindDims(context, m, n, k);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  return maps.size() == 3 &&
         maps[0] == AffineMap::get(3, 0, {m, k}, context) &&
         maps[1] == AffineMap::get(3, 0, {n, k}, context) &&
         maps[2] == AffineMap::get(3, 0, {m, n}, context);
}

/// The rows and columns of B's shared tile: K x N, or N x K when B is
/// stored transposed.
std::pair<int64_t, int64_t> bTileShape(linalg::MatmulOp op, int64_t blockN,
                                       int64_t kBlock) {
  return hasTransposedB(op) ? std::make_pair(blockN, kBlock)
                            : std::make_pair(kBlock, blockN);
}

/// The loop extents (M, N, K) of a matmul.
std::array<int64_t, 3> matmulExtents(linalg::MatmulOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  return {ranges[0], ranges[1], ranges[2]};
}

/// Divisors of `extent` among `candidates` that are multiples of `unit`.
SmallVector<int64_t>
dividingChoices(int64_t extent, ArrayRef<int64_t> candidates, int64_t unit) {
  SmallVector<int64_t> choices;
  for (int64_t c : candidates)
    if (c % unit == 0 && extent % c == 0)
      choices.push_back(c);
  return choices;
}

/// A knob over `choices` defaulting to the largest at most `preferred`.
Knob makeKnob(StringRef name, SmallVector<int64_t> choices, int64_t preferred) {
  Knob knob{name.str(), std::move(choices), 0};
  for (unsigned i = 0; i < knob.choices.size(); ++i)
    if (knob.choices[i] <= preferred)
      knob.defaultIndex = i;
  return knob;
}

/// The sizes a knob assignment gives.
struct MmaTiles {
  int64_t blockM, blockN, kBlock, warpsM, warpsN;
  int64_t warpM() const { return blockM / warpsM; }
  int64_t warpN() const { return blockN / warpsN; }
  int64_t threads(int64_t warpSize) const { return warpsM * warpsN * warpSize; }
};

MmaTiles tilesFor(const KnobAssignment &knobs) {
  return {knobs.get("block.m", 128), knobs.get("block.n", 128),
          knobs.get("kblock", 32), knobs.get("warps.m", 2),
          knobs.get("warps.n", 2)};
}

/// Rows of a cooperative copy tile: a rows x cols tile of `bits`-bit
/// elements copied by `threads` threads, kCopyBytes at a time, each thread
/// taking a rows x vector block. 0 when the tile does not split evenly.
int64_t copyRowsPerThread(int64_t rows, int64_t cols, unsigned bits,
                          int64_t threads) {
  int64_t vector = kCopyBytes * 8 / bits;
  if (cols % vector != 0)
    return 0;
  int64_t vectors = rows * (cols / vector);
  if (vectors <= threads)
    return 1;
  if (vectors % threads != 0)
    return 0;
  int64_t perThread = vectors / threads;
  return rows % perThread == 0 ? perThread : 0;
}

class GpuMmaRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "gpu.mma"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    auto op = dyn_cast<linalg::MatmulOp>(anchor);
    if (target.family != TargetFamily::Cuda || computeCapability(target) < 80 ||
        !op || !isStaticTensorOp(op) || !isAloneInKernel(anchor))
      return false;
    // Row-major A; B as K x N or, as nn.Linear keeps its weight, N x K.
    if (op.hasUserDefinedMaps() && !hasTransposedB(op))
      return false;
    Type a = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
    Type b = getElementTypeOrSelf(op.getDpsInputOperand(1)->get().getType());
    Type c = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
    bool sixteenBit = a == b && (a.isF16() || a.isBF16());
    if (!sixteenBit || !(c.isF32() || (a.isF16() && c.isF16())))
      return false;
    auto [m, n, k] = matmulExtents(op);
    return m % kInstrM == 0 && n % kInstrN == 0 && k % kInstrK == 0 &&
           m >= 32 && n >= 32;
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    auto [m, n, k] = matmulExtents(cast<linalg::MatmulOp>(anchor));
    KnobSpace space;
    space.knobs.push_back(
        makeKnob("block.m", dividingChoices(m, {32, 64, 128, 256}, 32), 128));
    space.knobs.push_back(
        makeKnob("block.n", dividingChoices(n, {32, 64, 128, 256}, 32), 128));
    space.knobs.push_back(
        makeKnob("kblock", dividingChoices(k, {16, 32, 64}, kInstrK), 32));
    space.knobs.push_back(makeKnob("warps.m", {1, 2, 4}, 2));
    space.knobs.push_back(makeKnob("warps.n", {1, 2, 4}, 2));
    return space;
  }

  LogicalResult checkLimits(Operation *anchor, const TargetDescription &target,
                            const KnobAssignment &knobs,
                            std::string &reason) const override {
    MmaTiles t = tilesFor(knobs);
    auto op = cast<linalg::MatmulOp>(anchor);
    unsigned bits =
        getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType())
            .getIntOrFloatBitWidth();
    if (t.blockM % t.warpsM || t.blockN % t.warpsN || t.warpM() % kInstrM ||
        t.warpN() % kInstrN) {
      reason = llvm::formatv("warp tile {0}x{1} is not a whole number of "
                             "{2}x{3} instructions",
                             t.blockM / t.warpsM, t.blockN / t.warpsN, kInstrM,
                             kInstrN);
      return failure();
    }
    if (t.warpM() * t.warpN() > kMaxWarpTileElements) {
      reason = llvm::formatv("warp tile {0}x{1} needs more than 128 "
                             "accumulator registers per thread",
                             t.warpM(), t.warpN());
      return failure();
    }
    int64_t threads = t.threads(target.gpu.warpSize);
    auto [bRows, bCols] = bTileShape(op, t.blockN, t.kBlock);
    if (!copyRowsPerThread(t.blockM, t.kBlock, bits, threads) ||
        !copyRowsPerThread(bRows, bCols, bits, threads)) {
      reason = llvm::formatv("the {0}x{1} and {1}x{2} shared tiles do not "
                             "split evenly over {3} threads",
                             t.blockM, t.kBlock, t.blockN, threads);
      return failure();
    }
    uint64_t shared = (t.blockM + t.blockN) * t.kBlock * bits / 8;
    if (shared > staticSharedMemoryLimit(target)) {
      reason =
          llvm::formatv("shared tiles of {0} bytes exceed the limit", shared);
      return failure();
    }
    return checkBlockLimits(target, {threads, 1, 1},
                            /*registersPerThread=*/0, reason);
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    auto op = cast<linalg::MatmulOp>(anchor);
    MmaTiles t = tilesFor(knobs);
    Type aType =
        getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
    Type cType = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
    unsigned bits = aType.getIntOrFloatBitWidth();
    int64_t threads = t.threads(target.gpu.warpSize);
    int64_t vector = kCopyBytes * 8 / bits;
    std::string aName = aType.isBF16() ? "bf16" : "f16";
    std::string cName = cType.isF32() ? "f32" : "f16";

    ScriptWriter w;
    w.comment("sketch gpu.mma: " + knobs.str());
    std::string matmul = w.match("linalg.matmul", kAnchorAttr);
    std::string fill = w.match("", kProducerAttr);
    w.comment("S: block tiles");
    std::string blockForall;
    std::string tiled =
        tileUsingForallMapped(w, matmul, {t.blockM, t.blockN, 0},
                              "[#gpu.block<y>, #gpu.block<x>]", blockForall);
    w.comment("the fill of the accumulator, per block tile");
    w.fuseInto(fill, blockForall);
    w.comment("R: stages of K, A and B tiles copied to shared memory");
    SmallVector<std::string> loops;
    std::string staged = w.tileUsingFor(tiled, {0, 0, t.kBlock}, loops);
    std::string padded = w.fresh("op"), pad = w.fresh("pad"),
                copy = w.fresh("copy");
    w.line(llvm::formatv(
        "{0}, {1}, {2} = transform.structured.pad {3} {{padding_values = "
        "[0.0 : {4}, 0.0 : {4}, 0.0 : {5}], padding_dimensions = [0, 1, 2], "
        "nofold_flags = [1, 1, 0], copy_back_op = \"none\"} : "
        "(!transform.any_op) -> (!transform.any_op, !transform.any_op, "
        "!transform.any_op)",
        padded, pad, copy, staged, aName, cName));
    for (unsigned operand : {0u, 1u}) {
      std::string producer = w.fresh("operand");
      w.line(llvm::formatv("{0} = transform.get_producer_of_operand {1}[{2}] "
                           ": (!transform.any_op) -> !transform.any_op",
                           producer, padded, operand));
      w.bufferizeDestination(producer, kWorkgroup, "linalg.copy");
    }
    std::string copies = w.fresh("copies");
    w.line(copies + " = transform.structured.match ops{[\"linalg.copy\"]} in " +
           blockForall + " : (!transform.any_op) -> !transform.any_op");
    std::string copyA = w.fresh("copy"), copyB = w.fresh("copy");
    w.line(copyA + ", " + copyB + " = transform.split_handle " + copies +
           " : (!transform.any_op) -> (!transform.any_op, !transform.any_op)");
    w.comment("cooperative 16-byte copies by all threads of the block");
    std::string linear =
        "[#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>]";
    auto [bRows, bCols] = bTileShape(op, t.blockN, t.kBlock);
    std::string copyForall;
    tileUsingForallMapped(
        w, copyA,
        {copyRowsPerThread(t.blockM, t.kBlock, bits, threads), vector}, linear,
        copyForall);
    tileUsingForallMapped(
        w, copyB,
        {copyRowsPerThread(bRows, bCols, bits, threads), vector}, linear,
        copyForall);
    w.comment("S: warp tiles");
    std::string warps = "[#gpu.warp<linear_dim_1>, #gpu.warp<linear_dim_0>]";
    std::string warpForall;
    tileUsingForallMapped(w, fill, {t.warpM(), t.warpN()}, warps, warpForall);
    tileUsingForallMapped(w, padded, {t.warpM(), t.warpN(), 0}, warps,
                          warpForall);
    w.comment("each warp's tile one contraction, then bufferized and mapped");
    w.vectorizeFunction({"canonicalization"});
    std::string func = w.fresh("func"), bufferized = w.fresh("func");
    w.line(func + " = transform.structured.match ops{[\"func.func\"]} in "
                  "%root : (!transform.any_op) -> !transform.any_op");
    w.line(bufferized + " = transform.bufferization.one_shot_bufferize " +
           func + " : (!transform.any_op) -> !transform.any_op");
    std::string launch = w.fresh("launch");
    w.line(launch + " = transform.gpu.map_forall_to_blocks " + bufferized +
           " generate_gpu_launch : (!transform.any_op) -> !transform.any_op");
    w.line(llvm::formatv("{0} = transform.gpu.map_nested_forall_to_threads "
                         "{1} block_dims = [{2}, 1, 1] warp_size = {3} : "
                         "(!transform.any_op) -> !transform.any_op",
                         w.fresh("launch"), launch, threads,
                         target.gpu.warpSize));
    w.comment("widening folded into the contraction, views into the "
              "transfers, contractions unrolled to m16n8k16");
    std::string kernel = w.fresh("func");
    w.line(kernel + " = transform.structured.match ops{[\"func.func\"]} in "
                    "%root : (!transform.any_op) -> !transform.any_op");
    w.line("transform.apply_patterns to " + kernel + " {");
    w.line("  transform.apply_patterns.vector.fold_arith_extension");
    w.line(llvm::formatv(
        "  transform.apply_patterns.gpu.unroll_vectors_subgroup_mma "
        "[{0}, {1}, {2}]",
        kInstrM, kInstrN, kInstrK));
    w.line("  transform.apply_patterns.memref.fold_memref_alias_ops");
    w.line("  transform.apply_patterns.canonicalization");
    w.line("} : !transform.any_op");
    w.line("transform.apply_cse to " + kernel + " : !transform.any_op");
    return w.finish();
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    auto [m, n, k] = matmulExtents(cast<linalg::MatmulOp>(anchor));
    MmaTiles t = tilesFor(knobs);
    LoopNestDescription d;
    d.ranges = {m, n, k};
    d.reduction = {false, false, true};
    d.addLevel(TileLevelRole::Threads, {t.blockM, t.blockN, 0}, true);
    d.addLevel(TileLevelRole::Cache, {0, 0, t.kBlock}, false);
    d.addLevel(TileLevelRole::Register, {t.warpM(), t.warpN(), 0}, true);
    d.addLevel(TileLevelRole::Inner, {kInstrM, kInstrN, kInstrK}, false);
    d.threads = t.threads(target.gpu.warpSize);
    d.vectorLoop = 1;
    d.vectorWidth = kInstrN;
    return d;
  }
};

} // namespace

const SketchRule &ke::getGpuMmaRule() {
  static const GpuMmaRule rule;
  return rule;
}

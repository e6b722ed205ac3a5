//===- GpuMmaRule.cpp - Matmuls on tensor cores (mma.sync) ----------------===//
//
// gpu.mma: a 16-bit matmul or batch matmul (f16 or bf16 operands, f32 or
// f16 -> f16 result; f32 ones on +tf32 and +3xtf32 targets; A stored M x
// K, B K x N or N x K) on the tensor cores of sm_80 and later, through
// mma.sync m16n8k16 (m16n8k8 for TF32):
//
//   block tile (block.m x block.n)    scf.forall on #gpu.block (a batch per
//                                     block along z)
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
// (ke-gpu-vector-to-mma), the copies cp.async, several stages ahead
// (ke-gpu-pipeline-stage-copies). Block tiles must divide the matmul (no
// partial tiles yet). A fused elementwise consumer is tiled like the
// accumulators and applied to them in registers (the epilogue, in
// ke-gpu-vector-to-mma). docs/gpu.md has the steps.
//
//===----------------------------------------------------------------------===//

#include "GpuContraction.h"
#include "GpuRules.h"
#include "GpuSupport.h"
#include "RuleSupport.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ke;

namespace {

/// The mma.sync instruction's M and N (m16n8k16 for 16-bit operands,
/// m16n8k8 for TF32: K is 256 bits of operand).
constexpr int64_t kInstrM = 16, kInstrN = 8;
/// Bytes each thread copies to shared memory at a time.
constexpr int64_t kCopyBytes = 16;
/// The largest warp tile: 64x64 f32 accumulators are 128 registers of a
/// thread, half of what one may have.
constexpr int64_t kMaxWarpTileElements = 64 * 64;

/// True for an f32 contraction on a +3xtf32 target.
bool isTF32x3(const MmaContraction &c, const TargetDescription &target) {
  return target.tf32x3 && c.a.isF32();
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
    if (target.family != TargetFamily::Cuda || getCudaComputeCapability(target.chip) < 80 ||
        !hasMmaEpilogueOnly(anchor))
      return false;
    std::optional<MmaContraction> c = analyzeContraction(anchor);
    if (!c)
      return false;
    bool sixteenBit = c->a == c->b && (c->a.isF16() || c->a.isBF16()) &&
                      (c->c.isF32() || (c->a.isF16() && c->c.isF16()));
    // f32 on TF32 tensor cores only where the user allowed it.
    bool tf32 = target.allowTF32 && c->a.isF32() && c->b.isF32() &&
                c->c.isF32();
    if (!sixteenBit && !tf32)
      return false;
    // A grid's z dimension holds the batch.
    // Block tiles divide the matmul (32 at least), K stages of the
    // instruction's K.
    return c->m % 32 == 0 && c->n % 32 == 0 && c->k % c->instrK() == 0 &&
           c->batch <= 65535;
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    MmaContraction c = *analyzeContraction(anchor);
    int64_t m = c.m, n = c.n, k = c.k;
    KnobSpace space;
    space.knobs.push_back(
        makeKnob("block.m", dividingChoices(m, {32, 64, 128, 256}, 32), 128));
    space.knobs.push_back(
        makeKnob("block.n", dividingChoices(n, {32, 64, 128, 256}, 32), 128));
    // Stages of 32 16-bit or 16 f32 elements by default: 16 KiB for two
    // 128-wide tiles, three buffers within 48 KiB.
    space.knobs.push_back(makeKnob(
        "kblock", dividingChoices(k, {8, 16, 32, 64}, c.instrK()),
        512 / c.a.getIntOrFloatBitWidth()));
    space.knobs.push_back(makeKnob("warps.m", {1, 2, 4}, 2));
    // 3xTF32 carries each accumulator twice (the stage's and the sum, see
    // ke-gpu-vector-to-mma): warp tiles of half the size by default.
    space.knobs.push_back(
        makeKnob("warps.n", {1, 2, 4}, isTF32x3(c, target) ? 4 : 2));
    return space;
  }

  LogicalResult checkLimits(Operation *anchor, const TargetDescription &target,
                            const KnobAssignment &knobs,
                            std::string &reason) const override {
    MmaTiles t = tilesFor(knobs);
    MmaContraction c = *analyzeContraction(anchor);
    unsigned bits = c.a.getIntOrFloatBitWidth();
    if (t.blockM % t.warpsM || t.blockN % t.warpsN || t.warpM() % kInstrM ||
        t.warpN() % kInstrN) {
      reason = llvm::formatv("warp tile {0}x{1} is not a whole number of "
                             "{2}x{3} instructions",
                             t.blockM / t.warpsM, t.blockN / t.warpsN, kInstrM,
                             kInstrN);
      return failure();
    }
    int64_t maxWarpTile = isTF32x3(c, target) ? kMaxWarpTileElements / 2
                                              : kMaxWarpTileElements;
    if (t.warpM() * t.warpN() > maxWarpTile) {
      reason = llvm::formatv("warp tile {0}x{1} needs more than 128 "
                             "accumulator registers per thread",
                             t.warpM(), t.warpN());
      return failure();
    }
    int64_t threads = t.threads(target.gpu.warpSize);
    auto [aRows, aCols] = c.aTile(t.blockM, t.kBlock);
    auto [bRows, bCols] = c.bTile(t.blockN, t.kBlock);
    if (!copyRowsPerThread(aRows, aCols, bits, threads) ||
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
    MmaContraction c = *analyzeContraction(anchor);
    MmaTiles t = tilesFor(knobs);
    unsigned bits = c.a.getIntOrFloatBitWidth();
    int64_t threads = t.threads(target.gpu.warpSize);
    int64_t vector = kCopyBytes * 8 / bits;
    std::string aName = typeName(c.a), cName = typeName(c.c);
    // A batch matmul runs one batch per block (grid z); everything else is
    // the matmul's schedule with the batch loop untiled (0) inside.
    bool batched = c.batchLoops > 0;

    ScriptWriter w;
    w.comment("sketch gpu.mma: " + knobs.str());
    std::string anchorOp = anchor->getName().getStringRef().str();
    std::string matmul = w.match(anchorOp, kAnchorAttr);
    bool epilogue = findKernelNeighbours(anchor).consumer != nullptr;
    std::string consumer = epilogue ? w.match("", kConsumerAttr) : "";
    std::string fill = w.match("", kProducerAttr);
    std::string blockMapping =
        batched ? "[#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]"
                : "[#gpu.block<y>, #gpu.block<x>]";
    std::string blockForall, tiled;
    if (epilogue) {
      w.comment("S: block tiles of the consumer (the epilogue), the matmul "
                "fused into them");
      consumer =
          tileUsingForallMapped(w, consumer, c.sizes({t.blockM, t.blockN}, 1),
                                blockMapping, blockForall);
      w.fuseInto(matmul, blockForall);
      tiled = matmul;
    } else {
      w.comment("S: block tiles");
      tiled =
          tileUsingForallMapped(w, matmul, c.sizes({t.blockM, t.blockN, 0}, 1),
                                blockMapping, blockForall);
    }
    w.comment("the fill of the accumulator, per block tile");
    w.fuseInto(fill, blockForall);
    if (epilogue) {
      // The block's f32 result between the matmul and its consumer: each
      // thread reads back exactly the accumulator elements it wrote, which
      // ke-gpu-vector-to-mma forwards from registers (the buffer is gone
      // before codegen, and its absence is checked).
      w.comment("the block tile between the matmul and the epilogue, "
                "forwarded from registers");
      w.bufferizeDestination(fill, kPrivate, "");
    }
    w.comment("R: stages of K, A and B tiles copied to shared memory");
    SmallVector<std::string> loops;
    std::string staged =
        w.tileUsingFor(tiled, c.sizes({0, 0, t.kBlock}, 0), loops);
    std::string padded = w.fresh("op"), pad = w.fresh("pad"),
                copy = w.fresh("copy");
    SmallVector<int64_t> padDims;
    for (unsigned d = 0; d < c.batchLoops + 3; ++d)
      padDims.push_back(d);
    w.line(llvm::formatv(
        "{0}, {1}, {2} = transform.structured.pad {3} {{padding_values = "
        "[0.0 : {4}, 0.0 : {4}, 0.0 : {5}], padding_dimensions = {6}, "
        "nofold_flags = [1, 1, 0], copy_back_op = \"none\"} : "
        "(!transform.any_op) -> (!transform.any_op, !transform.any_op, "
        "!transform.any_op)",
        padded, pad, copy, staged, aName, cName, ScriptWriter::list(padDims)));
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
    auto [aRows, aCols] = c.aTile(t.blockM, t.kBlock);
    auto [bRows, bCols] = c.bTile(t.blockN, t.kBlock);
    std::string copyForall;
    tileUsingForallMapped(
        w, copyA,
        c.sizes({copyRowsPerThread(aRows, aCols, bits, threads), vector}, 0),
        linear, copyForall);
    tileUsingForallMapped(
        w, copyB,
        c.sizes({copyRowsPerThread(bRows, bCols, bits, threads), vector}, 0),
        linear, copyForall);
    w.comment("S: warp tiles");
    std::string warps = "[#gpu.warp<linear_dim_1>, #gpu.warp<linear_dim_0>]";
    std::string warpForall;
    tileUsingForallMapped(w, fill, c.sizes({t.warpM(), t.warpN()}, 0), warps,
                          warpForall);
    tileUsingForallMapped(w, padded, c.sizes({t.warpM(), t.warpN(), 0}, 0),
                          warps, warpForall);
    if (epilogue) {
      w.comment("the epilogue's warp tiles: the accumulators' own");
      tileUsingForallMapped(w, consumer, c.sizes({t.warpM(), t.warpN()}, 0),
                            warps, warpForall);
    }
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
    // A batch matmul's contraction has a unit batch loop: dropped, so that
    // it is a plain 2-D contraction as mma.sync wants.
    if (batched)
      w.line(
          "  transform.apply_patterns.vector.cast_away_vector_leading_one_dim");
    w.line(llvm::formatv(
        "  transform.apply_patterns.gpu.unroll_vectors_subgroup_mma "
        "[{0}, {1}, {2}]",
        kInstrM, kInstrN, c.instrK()));
    w.line("  transform.apply_patterns.memref.fold_memref_alias_ops");
    w.line("  transform.apply_patterns.canonicalization");
    w.line("} : !transform.any_op");
    w.line("transform.apply_cse to " + kernel + " : !transform.any_op");
    return w.finish();
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    MmaContraction c = *analyzeContraction(anchor);
    MmaTiles t = tilesFor(knobs);
    return describeMmaNest(c, {t.blockM, t.blockN, t.kBlock, t.warpM(),
                               t.warpN(), kInstrM, kInstrN, c.instrK(),
                               t.threads(target.gpu.warpSize), kInstrN});
  }
};

} // namespace

const SketchRule &ke::getGpuMmaRule() {
  static const GpuMmaRule rule;
  return rule;
}

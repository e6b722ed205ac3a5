//===- GpuWgmmaRule.cpp - Matmuls on Hopper's warpgroup MMA ---------------===//
//
// gpu.wgmma: a 16-bit matmul or batch matmul (f16 or bf16 operands, an f32
// result, A stored M x K, B K x N or N x K; f32 operands in TF32 on +tf32
// targets, B N x K) on sm_90a, through wgmma.mma_async m64nNk16 (k8):
//
//   block tile (block.m x block.n)   grid (N / block.n, M / block.m, batch),
//                                    partial tiles zero-filled and masked
//   warpgroups                       block.m / 64, each 64 x block.n
//   stages                           shared tiles of 128 bytes of K,
//                                    cp.async'd stages - 2 ahead
//   group.m                          tile rows per column sweep (grouped
//                                    rasterization for L2 reuse)
//   split.k                          K parts on blocks along z, their sums
//                                    added by a second kernel
//   tma                              0: cp.async by every thread; 1: TMA
//                                    bulk copies by one thread (host tensor
//                                    maps, an mbarrier per stage), stages -
//                                    2 tiles ahead, a block barrier per K
//                                    tile; 2: TMA stages - 1 ahead, stages
//                                    released per warpgroup through a second
//                                    mbarrier, no block barrier; matmuls
//                                    only
//
// The script only marks the matmul with its knobs and bufferizes:
// ke-gpu-wgmma-matmuls (lib/Codegen/GpuWgmmaMatmuls.cpp), the first step of
// the CUDA lowering, builds the kernel, since no transform op produces
// wgmma; a fused elementwise consumer is marked too and applied to the
// accumulators before they are stored. docs/gpu.md has the steps and their
// measured effect.
//
//===----------------------------------------------------------------------===//

#include "GpuContraction.h"
#include "GpuRules.h"
#include "GpuSupport.h"
#include "RuleSupport.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ke;

namespace {

/// wgmma's M; bytes of K per stage (one 128-byte swizzle row: 64 16-bit
/// elements, 32 f32 ones) and per instruction.
constexpr int64_t kInstrM = 64, kKTileBytes = 128, kInstrKBytes = 32;
constexpr int64_t kWarpgroupThreads = 128;
/// Registers per thread besides the accumulators (addresses, descriptors,
/// loop state), for the register-file check.
constexpr int64_t kOtherRegisters = 40;
/// Block tile rows that sweep the tile columns together (grouped
/// rasterization, so that the blocks in flight share B tiles in L2).
constexpr int64_t kDefaultGroupM = 8;
/// How tiles are loaded by default: TMA with a block barrier per K tile (1;
/// measured on an H200: 10% faster than cp.async at 4096^3, and within 2%
/// of the release barriers of 2 at 4 stages).
constexpr int64_t kDefaultTma = 1;

/// K elements per stage and per instruction for `element` operands.
int64_t kTile(Type element) {
  return kKTileBytes * 8 / element.getIntOrFloatBitWidth();
}
int64_t instrK(Type element) {
  return kInstrKBytes * 8 / element.getIntOrFloatBitWidth();
}

/// The sizes a knob assignment gives.
struct WgmmaTiles {
  int64_t blockM, blockN, stages, groupM, splitK, tma;
  int64_t threads() const { return blockM / kInstrM * kWarpgroupThreads; }
  /// The shared tiles of all stages, TMA's mbarriers and the alignment
  /// slack.
  uint64_t sharedBytes() const {
    return stages * (blockM + blockN) * kKTileBytes + 8 * stages * tma + 1024;
  }
};

WgmmaTiles tilesFor(const KnobAssignment &knobs) {
  return {knobs.get("block.m", 128),
          knobs.get("block.n", 256),
          knobs.get("stages", 4),
          knobs.get("group.m", kDefaultGroupM),
          knobs.get("split.k", 1),
          knobs.get("tma", 0)};
}

/// The anchor as a GEMM; a convolution's K tile (128 bytes) must be one
/// filter tap's channels.
std::optional<TensorCoreGemm> analyzeGemm(Operation *anchor) {
  std::optional<TensorCoreGemm> g = analyzeTensorCoreGemm(anchor);
  if (g && !g->convLoops.empty() && g->convLoops[6] % kTile(g->c.a))
    return std::nullopt;
  return g;
}

bool isSm90a(const TargetDescription &target) {
  return target.family == TargetFamily::Cuda && target.chip == "sm_90a";
}

class GpuWgmmaRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "gpu.wgmma"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    if (!isSm90a(target))
      return false;
    // A fused elementwise consumer runs on the accumulators (the epilogue).
    if (!hasMmaEpilogueOnly(anchor))
      return false;
    std::optional<TensorCoreGemm> gemm = analyzeGemm(anchor);
    if (!gemm)
      return false;
    MmaContraction *c = &gemm->c;
    if (c->a != c->b || !c->c.isF32())
      return false;
    // f32 on TF32 tensor cores only where the user allowed it (operands
    // stored K x M or K x N are transposed by a kernel of their own first:
    // wgmma transposes only 16-bit tiles).
    bool tf32 = c->a.isF32() && target.allowTF32 && !target.tf32x3;
    if (!c->a.isF16() && !c->a.isBF16() && !tf32)
      return false;
    // Partial tiles are zero-filled and masked; rows must start 16 bytes
    // aligned for cp.async.
    // (A's rows run along K, or M when stored K x M; B's along N, or K when
    // stored N x K; the result is stored in pairs.)
    // (TF32 operands are read with K innermost: transposed first where
    // they are stored the other way.)
    int64_t vector = 128 / c->a.getIntOrFloatBitWidth();
    bool aKMajor = !c->transposedA || tf32, bKMajor = c->transposedB || tf32;
    return (aKMajor ? c->k : c->m) % vector == 0 &&
           (bKMajor ? c->k : c->n) % vector == 0 && c->n % 2 == 0 &&
           c->batch <= 65535;
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    MmaContraction c = analyzeGemm(anchor)->c;
    KnobSpace space;
    space.knobs.push_back(makeKnob("block.m", coveringTileChoices(c.m, 64), 128));
    // 128 x 256 blocks are the fastest where there are enough of them for
    // the SMs; fewer tiles take 128 x 128 (twice the blocks).
    int64_t wideTiles =
        llvm::divideCeil(c.m, 128) * llvm::divideCeil(c.n, 256) * c.batch;
    int64_t defaultN =
        wideTiles >= int64_t(target.gpu.multiprocessors) ? 256 : 128;
    space.knobs.push_back(makeKnob("block.n", coveringTileChoices(c.n, 64), defaultN));
    SmallVector<int64_t> stages;
    for (int64_t s : {3, 4, 5, 6})
      if (s - 2 <= llvm::divideCeil(c.k, kTile(c.a)))
        stages.push_back(s);
    space.knobs.push_back(makeKnob("stages", stages, 4));
    // Split K where the output has too few tiles for the SMs (a matmul's
    // grid z is free; a batch matmul's holds the batch): parts of at least
    // 8 K tiles, enough blocks for the machine by default.
    int64_t kTiles = llvm::divideCeil(c.k, kTile(c.a));
    if (!c.batchLoops) {
      SmallVector<int64_t> splits;
      for (int64_t split : {1, 2, 4, 8, 16, 32, 64})
        if (kTiles % split == 0)
          splits.push_back(split);
      int64_t tiles =
          llvm::divideCeil(c.m, 128) * llvm::divideCeil(c.n, defaultN);
      int64_t preferred = 1;
      while (llvm::is_contained(splits, preferred * 2) &&
             tiles * preferred * 2 <= target.gpu.multiprocessors &&
             kTiles / (preferred * 2) >= 8)
        preferred *= 2;
      if (splits.size() > 1)
        space.knobs.push_back(makeKnob("split.k", splits, preferred));
    }
    // Grouped rasterization only matters with several tile rows.
    if (c.m / 64 > 1)
      space.knobs.push_back(
          makeKnob("group.m", {1, 4, 8, 16}, kDefaultGroupM));
    // TMA copies boxes of stored matrices; a convolution's A rows are
    // gathered.
    if (analyzeGemm(anchor)->convLoops.empty())
      space.knobs.push_back(makeKnob("tma", {0, 1, 2}, kDefaultTma));
    return space;
  }

  LogicalResult checkLimits(Operation *anchor, const TargetDescription &target,
                            const KnobAssignment &knobs,
                            std::string &reason) const override {
    WgmmaTiles t = tilesFor(knobs);
    // Tile rows run along the grid's y (at most 65535 blocks).
    MmaContraction c = analyzeGemm(anchor)->c;
    if (llvm::divideCeil(c.m, t.blockM) > 65535) {
      reason = llvm::formatv("{0} tile rows of {1} exceed the grid's y",
                             llvm::divideCeil(c.m, t.blockM), t.blockM);
      return failure();
    }
    if (llvm::divideCeil(c.k, kTile(c.a)) / t.splitK < t.stages - 2) {
      reason = llvm::formatv("{0} stages need more than the {1} K tiles of "
                             "each of {2} splits",
                             t.stages,
                             llvm::divideCeil(c.k, kTile(c.a)) / t.splitK,
                             t.splitK);
      return failure();
    }
    uint64_t shared = t.sharedBytes();
    if (shared > target.gpu.sharedMemoryPerBlockBytes) {
      reason = llvm::formatv("{0} stages of {1}x{2} tiles need {3} bytes of "
                             "shared memory",
                             t.stages, t.blockM, t.blockN, shared);
      return failure();
    }
    // A thread holds block.n / 2 f32 accumulators.
    return checkBlockLimits(target, {t.threads(), 1, 1},
                            t.blockN / 2 + kOtherRegisters, reason);
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    WgmmaTiles t = tilesFor(knobs);
    SmallVector<std::pair<llvm::StringRef, int64_t>> mark = {
        {"block_m", t.blockM},
        {"block_n", t.blockN},
        {"stages", t.stages},
        {"group_m", t.groupM}};
    if (t.splitK > 1)
      mark.push_back({"split_k", t.splitK});
    if (t.tma)
      mark.push_back({"tma", t.tma});
    return emitMarkScript(anchor, getName(), knobs, "ke.wgmma", mark,
                          "ke-gpu-wgmma-matmuls");
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    TensorCoreGemm gemm = *analyzeGemm(anchor);
    MmaContraction &c = gemm.c;
    WgmmaTiles t = tilesFor(knobs);
    // One wgmma spans the block's N; vectors of 8 along it (a 16-byte
    // copy chunk of 16-bit elements, one m16n8 slab of the accumulators).
    MmaNestTiles tiles{t.blockM,  t.blockN, kTile(c.a), kInstrM, t.blockN,
                       kInstrM,   t.blockN, instrK(c.a), t.threads(), 8};
    LoopNestDescription d = gemm.convLoops.empty()
                                ? describeMmaNest(c, tiles)
                                : describeConvGemmNest(gemm.convLoops, tiles);
    d.tileCopy = t.tma ? LoopNestDescription::TileCopy::Tma
                       : LoopNestDescription::TileCopy::CpAsync;
    // tma = 2 keeps one more tile in flight.
    d.pipelineStages = t.tma == 2 ? t.stages : t.stages - 1;
    d.rasterGroup = t.groupM;
    return d;
  }
};

} // namespace

const SketchRule &ke::getGpuWgmmaRule() {
  static const GpuWgmmaRule rule;
  return rule;
}

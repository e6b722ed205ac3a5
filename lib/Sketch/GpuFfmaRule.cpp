//===- GpuFfmaRule.cpp - f32 GEMMs on CUDA cores, built by a pass ---------===//
//
// gpu.ffma: an f32 matmul, batch matmul (A stored M x K or K x M, B K x N
// or N x K) or channels-last 1-D, 2-D or 3-D convolution (an implicit GEMM) on
// CUDA targets, with at most one fused elementwise consumer, on a kernel built
// the way fast CUDA-core SGEMMs are:
//
//   block tile (block.m x block.n)   grid (N / block.n x M / block.m, 1, batch),
//                                    partial tiles zero-filled and masked
//   thread.n                         8 x thread.n results per thread (8 or
//                                    16), warp tiles of 32 x 8 thread.n
//   k.tile                           K rows per shared stage
//   stages                           shared buffers, cp.async'd
//                                    stages - 1 tiles ahead
//   group.m                          tile rows per column sweep (grouped
//                                    rasterization for L2 reuse)
//
// The script only marks the op with its knobs and bufferizes:
// ke-gpu-ffma-matmuls (lib/Codegen/GpuFfmaMatmuls.cpp), the first step of
// the CUDA lowering, builds the kernel, whose thread layout (2 x 2 blocks
// of 4 x 4 results per thread, conflict-free 16-byte shared reads), one
// barrier per K tile and transposing cp.async copies no transform op
// produces. A fused elementwise consumer is marked too and applied to each
// result before it is stored. docs/gpu.md has the measured effect.
//
//===----------------------------------------------------------------------===//

#include "GpuContraction.h"
#include "GpuRules.h"
#include "GpuSupport.h"
#include "RuleSupport.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ke;

namespace {

/// A warp's rows and threads along N; a thread's rows.
constexpr int64_t kWarpM = 32, kWarpThreadsN = 8, kThreadM = 8;
/// Each shared row's padding, in elements (as the pass pads: 4, 8 for
/// mma.sync's fragment reads).
constexpr int64_t kPad = 4, kMmaPad = 8;
/// Registers per thread besides the accumulators: A and B vectors,
/// addresses, loop state.
constexpr int64_t kOtherRegisters = 56;
constexpr int64_t kDefaultGroupM = 8;

struct FfmaTiles {
  int64_t blockM, blockN, kTile, stages, groupM, threadN;
  /// mma.sync m16n8k8 tiles instead of FMAs (targets that allow TF32).
  bool mma = false;
  int64_t threads() const { return blockM * blockN / (kThreadM * threadN); }
  int64_t warpN() const { return kWarpThreadsN * threadN; }
  uint64_t sharedBytes() const {
    return uint64_t(stages) * kTile *
           (blockM + blockN + 2 * (mma ? kMmaPad : kPad)) * 4;
  }
};

/// Whether f32 GEMMs may run on the target's tensor cores (a +tf32 or
/// +3xtf32 target of sm_80 or later): then gpu.ffma's kernel may take
/// mma.sync tiles, which ke-gpu-vector-to-mma makes TF32 or 3xTF32.
bool allowsTensorCores(const TargetDescription &target) {
  return target.allowTF32 && getCudaComputeCapability(target.chip) >= 80;
}

/// Whether `gemm` is a 16-bit convolution (bf16 or f16 operands, an f32
/// result): ke-gpu-ffma-matmuls extends its operands into f32 scratch
/// buffers first. Every operand value is then exact in TF32 (8 exponent and
/// 10 mantissa bits hold bf16's 8 + 7 and f16's 5 + 10), so mma.sync tiles
/// (sm_80 and later) change no product, whatever the target's f32 numerics.
bool isNarrowConv(const TensorCoreGemm &gemm) {
  const MmaContraction &c = gemm.c;
  return !gemm.convLoops.empty() && c.a == c.b && (c.a.isBF16() || c.a.isF16());
}

/// Whether `anchor` is such a convolution on a target with TF32 mma.sync.
bool hasExactTF32Operands(Operation *anchor, const TargetDescription &target) {
  std::optional<TensorCoreGemm> gemm =
      analyzeTensorCoreGemm(anchor, /*anySpatialRank=*/true);
  return gemm && isNarrowConv(*gemm) &&
         getCudaComputeCapability(target.chip) >= 80;
}

/// The default block tile: the largest of these that gives every SM a
/// block (few, large tiles leave SMs idle), else the smallest.
std::pair<int64_t, int64_t> defaultBlock(const MmaContraction &c,
                                         const TargetDescription &target) {
  static constexpr std::pair<int64_t, int64_t> blocks[] = {
      {128, 128}, {64, 128}, {64, 64}, {32, 64}};
  for (auto [m, n] : blocks)
    if (llvm::divideCeil(c.m, m) * llvm::divideCeil(c.n, n) * c.batch >=
        int64_t(target.gpu.multiprocessors))
      return {m, n};
  return blocks[std::size(blocks) - 1];
}

FfmaTiles tilesFor(const KnobAssignment &knobs) {
  return {knobs.get("block.m", 128),
          knobs.get("block.n", 128),
          knobs.get("k.tile", 8),
          knobs.get("stages", 4),
          knobs.get("group.m", kDefaultGroupM),
          knobs.get("thread.n", 8),
          knobs.get("mma", 0) != 0};
}

class GpuFfmaRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "gpu.ffma"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    // cp.async and the NVVM barrier: CUDA only.
    // A consumer that reads the result through a permutation (the
    // transpose back to channels-first of a convolution from PyTorch) is
    // applied as the result is stored.
    if (target.family != TargetFamily::Cuda ||
        !hasMmaEpilogueOnly(anchor, /*allowPermutedRead=*/true))
      return false;
    std::optional<TensorCoreGemm> gemm = analyzeTensorCoreGemm(anchor, /*anySpatialRank=*/true);
    if (!gemm)
      return false;
    const MmaContraction &c = gemm->c;
    // The tiles run along the grid's x (2^31 - 1), batches along z.
    // 16-bit convolutions too: the native tensor-core kernels take 16-bit
    // matmuls and, on sm_90a, some convolutions (gpu.wgmma comes first);
    // the rest ran on gpu.tile's generic loops, slower than in f32
    // (KernelBench level 2 in bf16, H200, 2026-11-29: docs/gpu.md).
    bool operands = (c.a.isF32() && c.b.isF32()) || isNarrowConv(*gemm);
    return operands && c.c.isF32() && c.batch <= 65535 &&
           llvm::divideCeil(c.m, kWarpM) * llvm::divideCeil(c.n, kWarpM) <=
               std::numeric_limits<int32_t>::max();
  }

  /// The default where its blocks fill the GPU: on fewer, smaller
  /// problems one thread's long K loop of 8 x 8 tiles is slower than
  /// gpu.tile's finer split (H200, 2026-11-28: nn.Linear 100 x 300 -> 200
  /// with bias and ReLU 28.0 us against 15.2; 4096^3 3003 us against 3860).
  ///
  /// And where N fills at least half of a warp's 64 columns: below, most
  /// of the threads' FMAs are on zero-filled columns (KernelBench level 2
  /// on the H200, 2026-11-29, whole problems against gpu.tile's default:
  /// with 3-D convolutions of 16 or 24 filters 0.50-0.75x as fast; of 32
  /// filters 0.80x and 1.61x; with a 2-D one of 32 filters 1.12x; with
  /// every 2-D or 3-D one of 64 or more filters faster, up to 3.5x).
  bool prefersDefault(Operation *anchor,
                      const TargetDescription &target) const override {
    MmaContraction c = analyzeTensorCoreGemm(anchor, /*anySpatialRank=*/true)->c;
    if (c.n < kWarpThreadsN * 4)
      return false;
    auto [blockM, blockN] = defaultBlock(c, target);
    return llvm::divideCeil(c.m, blockM) * llvm::divideCeil(c.n, blockN) *
               c.batch >=
           int64_t(target.gpu.multiprocessors);
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    TensorCoreGemm gemm = *analyzeTensorCoreGemm(anchor, /*anySpatialRank=*/true);
    const MmaContraction &c = gemm.c;
    auto [blockM, blockN] = defaultBlock(c, target);
    // Deep matmuls take K tiles of 16 by default: half the barriers and
    // cp.async waits per FMA (H200, 2026-11-29, nn.Linear's layout, 128 x
    // 128 blocks, 4 stages: 16384 x 4096 x 4096 12.07 -> 11.78 ms,
    // 1024 x 8192 x 8192 3.13 -> 3.01 ms). Convolutions keep 8 (not
    // measured).
    int64_t kTile = gemm.convLoops.empty() && c.k >= 512 ? 16 : 8;
    KnobSpace space;
    space.knobs.push_back(makeKnob("block.m", coveringTileChoices(c.m, kWarpM), blockM));
    space.knobs.push_back(
        makeKnob("block.n", coveringTileChoices(c.n, kWarpThreadsN * 8), blockN));
    space.knobs.push_back(makeKnob("thread.n", {8, 16}, 8));
    space.knobs.push_back(makeKnob("k.tile", {4, 8, 16, 32}, kTile));
    space.knobs.push_back(makeKnob("stages", {2, 3, 4, 5}, 4));
    if (llvm::divideCeil(c.m, kWarpM) > 1)
      space.knobs.push_back(
          makeKnob("group.m", {1, 4, 8, 16}, kDefaultGroupM));
    // Where the user allowed TF32 (+tf32, +3xtf32), mma.sync tiles are the
    // default: at +3xtf32 on an H200 (2026-11-29, `ke-opt bench --records`
    // of benchmarks/gpu/knob_records.py) they ran eight convolutions
    // 1.09-1.66x faster than the FMA tiles of the same knobs, within the
    // f32 tolerance (relative errors 3-4e-7).
    // So are they for 16-bit convolutions, whose operands TF32 holds
    // exactly (KernelBench level 2 in bf16, H200, 2026-11-29: 0.12-0.85x
    // of eager on gpu.tile, 0.44-2.9x on these tiles with the operands
    // extended by a graph rewrite; docs/kernelbench.md).
    if (allowsTensorCores(target) || hasExactTF32Operands(anchor, target))
      space.knobs.push_back(makeKnob("mma", {0, 1}, 1));
    return space;
  }

  LogicalResult checkLimits(Operation *anchor, const TargetDescription &target,
                            const KnobAssignment &knobs,
                            std::string &reason) const override {
    FfmaTiles t = tilesFor(knobs);
    if (t.blockN % t.warpN()) {
      reason = llvm::formatv("block.n {0} is not a multiple of the warp's {1}",
                             t.blockN, t.warpN());
      return failure();
    }
    if (t.mma && t.kTile % 8) {
      reason = llvm::formatv("mma.sync takes K tiles of multiples of 8, not {0}",
                             t.kTile);
      return failure();
    }
    if (t.sharedBytes() > target.gpu.sharedMemoryPerBlockBytes) {
      reason = llvm::formatv("{0} stages of {1}x{2}x{3} tiles need {4} bytes "
                             "of shared memory",
                             t.stages, t.blockM, t.blockN, t.kTile,
                             t.sharedBytes());
      return failure();
    }
    // 3xTF32 keeps each accumulator twice (a stage's sum and the total,
    // see ke-gpu-vector-to-mma) and both halves of each fragment.
    int64_t registers = kThreadM * t.threadN + kOtherRegisters;
    if (t.mma && target.tf32x3 && !hasExactTF32Operands(anchor, target))
      registers += kThreadM * t.threadN + 8 + 4 * t.threadN;
    return checkBlockLimits(target, {t.threads(), 1, 1}, registers, reason);
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    FfmaTiles t = tilesFor(knobs);
    SmallVector<std::pair<StringRef, int64_t>> mark = {
        {"block_m", t.blockM}, {"block_n", t.blockN},
        {"k_tile", t.kTile},   {"stages", t.stages},
        {"group_m", t.groupM}, {"thread_n", t.threadN}};
    if (t.mma)
      mark.push_back({"mma", 1});
    return emitMarkScript(anchor, getName(), knobs, "ke.ffma", mark,
                          "ke-gpu-ffma-matmuls");
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    TensorCoreGemm gemm = *analyzeTensorCoreGemm(anchor, /*anySpatialRank=*/true);
    FfmaTiles t = tilesFor(knobs);
    // A thread's 8 x thread.n results play the instruction's part; vectors
    // of 4 along N.
    MmaNestTiles tiles{t.blockM,  t.blockN,  t.kTile, kWarpM,      t.warpN(),
                       kThreadM,  t.threadN, 1,       t.threads(), 4};
    LoopNestDescription d =
        gemm.convLoops.empty() ? describeMmaNest(gemm.c, tiles)
                               : describeConvGemmNest(gemm.convLoops, tiles);
    d.tileCopy = LoopNestDescription::TileCopy::CpAsync;
    d.pipelineStages = t.stages;
    d.rasterGroup = t.groupM;
    return d;
  }
};

} // namespace

const SketchRule &ke::getGpuFfmaRule() {
  static const GpuFfmaRule rule;
  return rule;
}

//===- GpuMfmaRule.cpp - Matmuls on CDNA's matrix cores (MFMA) ------------===//
//
// gpu.mfma: a 16-bit matmul, batch matmul or channels-last convolution (f16
// or bf16 operands, an f32 result; A stored M x K or K x M, B K x N or
// N x K) on AMD CDNA GPUs with 16x16x16 MFMA for both types (gfx90a,
// gfx94x, gfx950), through amdgpu.mfma 16x16x16 (v_mfma_f32_16x16x16f16,
// v_mfma_f32_16x16x16bf16_1k):
//
//   block tile (block.m x block.n)   grid (N / block.n, M / block.m, batch),
//                                    partial tiles zero-filled and masked
//   waves (waves.m x waves.n)        64-lane wavefronts, each a
//                                    (block / waves) tile of 16x16 MFMAs
//   k.tile                           K elements per LDS stage: the next
//                                    stage's global loads are in registers
//                                    while this one multiplies
//   group.m                          tile rows per column sweep (grouped
//                                    rasterization for L2 reuse)
//
// The script only marks the op with its knobs and bufferizes, as gpu.wgmma
// does: ke-gpu-mfma-matmuls (lib/Codegen/GpuMfmaMatmuls.cpp), the first
// step of the ROCm lowering, builds the kernel, since no transform op
// produces MFMA; a fused elementwise consumer is marked too and applied to
// the accumulators before they are stored.
//
//===----------------------------------------------------------------------===//

#include "GpuContraction.h"
#include "GpuRules.h"
#include "GpuSupport.h"
#include "RuleSupport.h"

#include "ke/Workload/Kernel.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ke;

namespace {

/// The instruction's M, N and K; the wavefront; elements of one 16-byte
/// global load (the operands' contiguous extents must be multiples).
constexpr int64_t kInstr = 16, kWaveSize = 64, kVector = 8;
/// The LDS rows are padded by this many elements (16 bytes) so that the
/// lanes reading a fragment spread over the banks.
constexpr int64_t kPad = 8;
/// Registers per thread besides the accumulators and the prefetched stage
/// (addresses, fragments, loop state), for the register-file check.
constexpr int64_t kOtherRegisters = 40;
constexpr int64_t kDefaultGroupM = 8;

/// The sizes a knob assignment gives.
struct MfmaTiles {
  int64_t blockM, blockN, wavesM, wavesN, kTile, groupM;
  int64_t threads() const { return wavesM * wavesN * kWaveSize; }
  int64_t waveM() const { return blockM / wavesM; }
  int64_t waveN() const { return blockN / wavesN; }
  /// f32 accumulators per lane: four per 16x16 tile of the wave's.
  int64_t accumulators() const {
    return waveM() / kInstr * (waveN() / kInstr) * 4;
  }
  /// The A and B tiles of one stage, in either layout, each row padded.
  uint64_t ldsBytes(const MmaContraction &c) const {
    auto tile = [&](int64_t outer, bool kInner) {
      return kInner ? outer * (kTile + kPad) : kTile * (outer + kPad);
    };
    int64_t bytes = c.a.getIntOrFloatBitWidth() / 8;
    return (tile(blockM, !c.transposedA) + tile(blockN, c.transposedB)) *
           bytes;
  }
  /// 32-bit registers per lane holding the next stage's loads.
  int64_t prefetchRegisters() const {
    int64_t chunks = (blockM + blockN) * kTile / kVector;
    return llvm::divideCeil(chunks, threads()) * kVector / 2;
  }
};

MfmaTiles tilesFor(const KnobAssignment &knobs) {
  return {knobs.get("block.m", 128), knobs.get("block.n", 128),
          knobs.get("waves.m", 2),   knobs.get("waves.n", 2),
          knobs.get("k.tile", 32),   knobs.get("group.m", kDefaultGroupM)};
}

/// CDNA chips with 16x16x16 MFMA for f16 and bf16 (gfx908 has only the
/// bf16 instructions of half the K), and CUDA targets that emulate it to
/// check the kernels (`+mfma-emulation`).
bool hasMfma(const TargetDescription &target) {
  llvm::StringRef chip = target.chip;
  if (target.family == TargetFamily::Cuda)
    return target.emulateMfma;
  return target.family == TargetFamily::Rocm &&
         (chip == "gfx90a" || chip.starts_with("gfx94") || chip == "gfx950");
}

/// Shared memory of the emulation's operand exchange: a 64-lane
/// wavefront's 8 operand elements.
uint64_t emulationBytes(const TargetDescription &target, int64_t waves,
                        int64_t elementBytes) {
  return target.emulateMfma ? waves * kWaveSize * 8 * elementBytes : 0;
}

class GpuMfmaRule final : public SketchRule {
public:
  llvm::StringRef getName() const override { return "gpu.mfma"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    if (!hasMfma(target) || !hasMmaEpilogueOnly(anchor))
      return false;
    std::optional<TensorCoreGemm> gemm = analyzeTensorCoreGemm(anchor);
    if (!gemm)
      return false;
    const MmaContraction &c = gemm->c;
    if (c.a != c.b || !(c.a.isF16() || c.a.isBF16()) || !c.c.isF32())
      return false;
    // Each operand is loaded 16 bytes at a time along its contiguous
    // extent (A's K, or M when stored K x M; B's N, or K when stored
    // N x K); a convolution's chunk of channels must stay in one tap.
    if (!gemm->convLoops.empty() && gemm->convLoops[6] % kVector)
      return false;
    return (c.transposedA ? c.m : c.k) % kVector == 0 &&
           (c.transposedB ? c.k : c.n) % kVector == 0 && c.batch <= 65535;
  }

  KnobSpace getKnobSpace(Operation *anchor,
                         const TargetDescription &target) const override {
    MmaContraction c = analyzeTensorCoreGemm(anchor)->c;
    KnobSpace space;
    space.knobs.push_back(makeKnob("block.m", coveringTileChoices(c.m, 32), 128));
    space.knobs.push_back(makeKnob("block.n", coveringTileChoices(c.n, 32), 128));
    space.knobs.push_back(makeKnob("waves.m", {1, 2, 4}, 2));
    space.knobs.push_back(makeKnob("waves.n", {1, 2, 4}, 2));
    space.knobs.push_back(makeKnob("k.tile", {16, 32, 64}, 32));
    if (llvm::divideCeil(c.m, 32) > 1)
      space.knobs.push_back(
          makeKnob("group.m", {1, 4, 8, 16}, kDefaultGroupM));
    return space;
  }

  LogicalResult checkLimits(Operation *anchor, const TargetDescription &target,
                            const KnobAssignment &knobs,
                            std::string &reason) const override {
    MfmaTiles t = tilesFor(knobs);
    MmaContraction c = analyzeTensorCoreGemm(anchor)->c;
    if (t.blockM % (t.wavesM * kInstr) || t.blockN % (t.wavesN * kInstr)) {
      reason = llvm::formatv("{0}x{1} waves do not split a {2}x{3} block "
                             "into 16x16 tiles",
                             t.wavesM, t.wavesN, t.blockM, t.blockN);
      return failure();
    }
    if (t.accumulators() > 128) {
      reason = llvm::formatv("a {0}x{1} wave tile holds {2} accumulators "
                             "per lane (at most 128)",
                             t.waveM(), t.waveN(), t.accumulators());
      return failure();
    }
    if (llvm::divideCeil(c.m, t.blockM) > 65535) {
      reason = llvm::formatv("{0} tile rows of {1} exceed the grid's y",
                             llvm::divideCeil(c.m, t.blockM), t.blockM);
      return failure();
    }
    uint64_t lds =
        t.ldsBytes(c) + emulationBytes(target, t.wavesM * t.wavesN,
                                       c.a.getIntOrFloatBitWidth() / 8);
    if (lds > staticSharedMemoryLimit(target)) {
      reason = llvm::formatv("{0}x{1} tiles of {2} K need {3} bytes of LDS",
                             t.blockM, t.blockN, t.kTile, lds);
      return failure();
    }
    return checkBlockLimits(target, {t.threads(), 1, 1},
                            t.accumulators() + t.prefetchRegisters() +
                                kOtherRegisters,
                            reason);
  }

  std::string emitScript(Operation *anchor, const TargetDescription &target,
                         const KnobAssignment &knobs) const override {
    MfmaTiles t = tilesFor(knobs);
    return emitMarkScript(anchor, getName(), knobs, "ke.mfma",
                          {{"block_m", t.blockM},
                           {"block_n", t.blockN},
                           {"waves_m", t.wavesM},
                           {"waves_n", t.wavesN},
                           {"k_tile", t.kTile},
                           {"group_m", t.groupM}},
                          "ke-gpu-mfma-matmuls");
  }

  LoopNestDescription
  describeLoopNest(Operation *anchor, const TargetDescription &target,
                   const KnobAssignment &knobs) const override {
    TensorCoreGemm gemm = *analyzeTensorCoreGemm(anchor);
    MfmaTiles t = tilesFor(knobs);
    // Stores of 16 consecutive columns per row of a 16x16 tile.
    MmaNestTiles tiles{t.blockM, t.blockN, t.kTile,     t.waveM(), t.waveN(),
                       kInstr,   kInstr,   kInstr,      t.threads(), kInstr};
    LoopNestDescription d =
        gemm.convLoops.empty() ? describeMmaNest(gemm.c, tiles)
                               : describeConvGemmNest(gemm.convLoops, tiles);
    d.rasterGroup = t.groupM;
    return d;
  }
};

} // namespace

const SketchRule &ke::getGpuMfmaRule() {
  static const GpuMfmaRule rule;
  return rule;
}

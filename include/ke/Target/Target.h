//===- Target.h - Target strings and hardware descriptions ------*- C++ -*-===//
//
// A target string (`cpu`, `cpu:a64fx`, `cuda:sm_90`, `rocm:gfx942`, ...) names
// the machine ke schedules and generates code for. parseTarget turns it into
// a TargetDescription: what sketch rules, samplers and code generation need to
// know about the hardware. See docs/targets.md for every accepted form.
//
//===----------------------------------------------------------------------===//
#ifndef KE_TARGET_TARGET_H
#define KE_TARGET_TARGET_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ke {

/// The family of a target; it picks the sketch rules and the lowering.
enum class TargetFamily { Cpu, Cuda, Rocm };

/// Returns "cpu", "cuda" or "rocm".
llvm::StringRef stringifyTargetFamily(TargetFamily family);

/// CPU properties. Sizes are in bytes; caches are per core unless named
/// otherwise.
struct CpuDescription {
  /// Cores used for parallel loops (physical cores where known).
  unsigned cores = 1;
  /// Widest SIMD register in bits (SSE 128, AVX2 256, AVX-512 and A64FX 512).
  unsigned vectorBits = 128;
  /// True when the vector length is only known at run time (scalable SVE);
  /// vectorBits is then the architectural minimum.
  bool scalableVectors = false;
  uint64_t l1dBytes = 32 * 1024;
  uint64_t l2Bytes = 1024 * 1024;
  /// How many cores share one L2 (12 on A64FX, whose L2 serves a core
  /// memory group; 1 where each core has its own).
  unsigned l2SharedByCores = 1;
  /// Last-level cache shared by all cores (0 when there is none).
  uint64_t l3Bytes = 0;
};

/// GPU properties, per block and per multiprocessor (SM on NVIDIA, CU on AMD).
struct GpuDescription {
  /// Streaming multiprocessors (NVIDIA) or compute units (AMD).
  unsigned multiprocessors = 0;
  /// Threads that execute in lock step: 32 on NVIDIA, 64 on CDNA.
  unsigned warpSize = 32;
  unsigned maxThreadsPerBlock = 1024;
  /// Shared memory (LDS) one block may use, with the opt-in carve-out.
  uint64_t sharedMemoryPerBlockBytes = 48 * 1024;
  /// 32-bit registers per multiprocessor and the most one thread may use.
  unsigned registersPerMultiprocessor = 65536;
  unsigned maxRegistersPerThread = 255;
};

/// Everything ke knows about a target. Exactly one of `cpu` or `gpu` is
/// meaningful, as `family` says.
struct TargetDescription {
  /// The string the target was parsed from, normalized (e.g. "cuda:sm_90").
  std::string name;
  TargetFamily family = TargetFamily::Cpu;
  /// LLVM target triple, e.g. "x86_64-unknown-linux-gnu".
  std::string triple;
  /// LLVM CPU / chip name: "skylake-avx512", "a64fx", "sm_90", "gfx942".
  std::string chip;
  /// LLVM feature string, e.g. "+avx2,+fma" or "+ptx80".
  std::string features;
  /// True when the description was read off this machine (`cpu`).
  bool detectedFromHost = false;
  CpuDescription cpu;
  GpuDescription gpu;
  /// CUDA targets named with `+tf32` (`cuda:sm_90+tf32`, or `--allow-tf32`):
  /// f32 contractions may run on the tensor cores in TF32 (10 mantissa
  /// bits), which changes their numerics. Off by default, as in PyTorch;
  /// the suffix stays in the name, so records and pipelines of the two
  /// kinds never mix.
  bool allowTF32 = false;
  /// CUDA targets named with `+3xtf32` (sm_80 and later): f32 contractions
  /// run on the tensor cores as three TF32 products per product (each
  /// operand split into a TF32 high part and the TF32 rounding of the
  /// rest; the small x small term dropped), which keeps about 21 of f32's
  /// 24 mantissa bits at a third of TF32's speed. Results are checked at
  /// the f32 tolerance. Implies allowTF32 (the same tensor-core schedules).
  bool tf32x3 = false;
  /// CUDA targets named with `+mfma-emulation`: 16-bit contractions get
  /// ROCm's gpu.mfma kernels, each MFMA emulated by the wavefront's lanes
  /// through shared memory with the instruction's documented operand
  /// layout. Slow; it exists so that the MFMA kernels' tiling, copies,
  /// fragments and epilogues run and are checked against the reference
  /// where no AMD GPU is at hand.
  bool emulateMfma = false;

  bool isCpu() const { return family == TargetFamily::Cpu; }
  bool isGpu() const { return family != TargetFamily::Cpu; }
};

/// Parses a target string. Fails with a message that lists the valid forms.
llvm::Expected<TargetDescription> parseTarget(llvm::StringRef spec);

/// The compute capability a CUDA chip name gives (90 for sm_90 and
/// sm_90a), 0 for any other name.
int64_t getCudaComputeCapability(llvm::StringRef chip);

/// The target strings ke accepts, one line each, for help and error texts.
std::string describeValidTargets();

/// Describes the machine ke runs on (what `cpu` means).
TargetDescription detectHostTarget();

/// The vscale (SVE vector length in units of 128 bits) that code for
/// `target` may assume: vectorBits / 128 for AArch64 targets with SVE of a
/// fixed length (4 on cpu:a64fx), std::nullopt for scalable SVE and targets
/// without SVE. Code generation puts it on functions as vscale_range(N, N),
/// which lets the AArch64 backend lower fixed-length vectors to SVE.
std::optional<unsigned> getFixedSveVscale(const TargetDescription &target);

/// The description as JSON, for `ke-opt target` and the tuning database.
llvm::json::Value toJSON(const TargetDescription &target);

} // namespace ke

#endif // KE_TARGET_TARGET_H

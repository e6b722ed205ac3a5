//===- Target.cpp - Target strings and hardware descriptions --------------===//
//
// Map of the Target component (docs/targets.md):
//   Target.cpp         target strings (cpu, cpu:<model>, cuda:sm_NN,
//                      rocm:gfxN) to hardware descriptions, JSON
//   HostDetection.cpp  what `cpu` means on this machine
//
//===----------------------------------------------------------------------===//

#include "ke/Target/Target.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace ke;
using llvm::StringRef;

namespace {

/// A named CPU model ke knows without asking the host.
struct CpuModel {
  StringRef name;
  StringRef triple;
  StringRef chip;
  StringRef features;
  CpuDescription cpu;
  /// True when core counts and caches should come from the host if the host
  /// has the same architecture: these names describe an ISA level, not a
  /// machine (cpu:x86-64-v3 is "this kind of x86 machine, restricted to AVX2").
  bool hostShaped;
};

constexpr uint64_t KiB = 1024, MiB = 1024 * 1024;

const CpuModel kCpuModels[] = {
    {"x86-64", "x86_64-unknown-linux-gnu", "x86-64", "+sse2",
     {1, 128, false, 32 * KiB, 1 * MiB, 1, 0}, true},
    {"x86-64-v2", "x86_64-unknown-linux-gnu", "x86-64-v2", "+sse4.2,+popcnt",
     {1, 128, false, 32 * KiB, 1 * MiB, 1, 0}, true},
    {"x86-64-v3", "x86_64-unknown-linux-gnu", "x86-64-v3",
     "+avx,+avx2,+fma,+f16c,+bmi,+bmi2",
     {1, 256, false, 32 * KiB, 1 * MiB, 1, 0}, true},
    {"x86-64-v4", "x86_64-unknown-linux-gnu", "x86-64-v4",
     "+avx512f,+avx512bw,+avx512cd,+avx512dq,+avx512vl",
     {1, 512, false, 32 * KiB, 1 * MiB, 1, 0}, true},
    // Fujitsu A64FX: 48 compute cores in 4 core memory groups (CMGs) of 12,
    // 64 KiB L1D per core, 8 MiB L2 per CMG, fixed 512-bit SVE.
    {"a64fx", "aarch64-unknown-linux-gnu", "a64fx", "+sve",
     {48, 512, false, 64 * KiB, 8 * MiB, 12, 0}, false},
    // Generic AArch64 with scalable SVE: 128 bits is the architectural minimum.
    {"aarch64", "aarch64-unknown-linux-gnu", "generic", "+neon,+sve",
     {1, 128, true, 64 * KiB, 1 * MiB, 1, 0}, true},
};

/// A GPU architecture. Multiprocessor counts are those of the flagship
/// data-centre part of each generation; the runners read the real count off
/// the device.
struct GpuArch {
  TargetFamily family;
  StringRef chip;
  /// NVIDIA: the lowest PTX ISA that LLVM 22 accepts for the chip, or newer.
  StringRef features;
  GpuDescription gpu;
};

// AMD CDNA: 64-wide wavefronts, 64 KiB LDS per workgroup, 4 SIMDs x 512
// unified VGPR/AGPR x 64 lanes per CU.
const GpuArch kGpuArchs[] = {
    {TargetFamily::Cuda, "sm_70", "+ptx60", {80, 32, 1024, 96 * KiB, 65536, 255}},   // V100
    {TargetFamily::Cuda, "sm_75", "+ptx63", {40, 32, 1024, 64 * KiB, 65536, 255}},   // T4
    {TargetFamily::Cuda, "sm_80", "+ptx70", {108, 32, 1024, 163 * KiB, 65536, 255}}, // A100
    {TargetFamily::Cuda, "sm_86", "+ptx71", {84, 32, 1024, 99 * KiB, 65536, 255}},   // A10
    {TargetFamily::Cuda, "sm_89", "+ptx78", {142, 32, 1024, 99 * KiB, 65536, 255}},  // L40
    // sm_90 needs PTX 7.8 or later; 8.0 is what was verified on H100/H200.
    {TargetFamily::Cuda, "sm_90", "+ptx80", {132, 32, 1024, 227 * KiB, 65536, 255}},  // H100 SXM
    {TargetFamily::Cuda, "sm_90a", "+ptx80", {132, 32, 1024, 227 * KiB, 65536, 255}}, // H100 SXM
    {TargetFamily::Cuda, "sm_100", "+ptx86", {148, 32, 1024, 227 * KiB, 65536, 255}}, // B200
    {TargetFamily::Rocm, "gfx908", "", {120, 64, 1024, 64 * KiB, 131072, 512}}, // MI100
    {TargetFamily::Rocm, "gfx90a", "", {110, 64, 1024, 64 * KiB, 131072, 512}}, // MI250X GCD
    {TargetFamily::Rocm, "gfx942", "", {304, 64, 1024, 64 * KiB, 131072, 512}}, // MI300X
};

StringRef gpuTriple(TargetFamily family) {
  return family == TargetFamily::Cuda ? "nvptx64-nvidia-cuda"
                                      : "amdgcn-amd-amdhsa";
}

/// The chips of one GPU family, comma-separated.
std::string listGpuChips(TargetFamily family) {
  llvm::SmallVector<StringRef> chips;
  for (const GpuArch &arch : kGpuArchs)
    if (arch.family == family)
      chips.push_back(arch.chip);
  return llvm::join(chips, ", ");
}

TargetDescription fromCpuModel(const CpuModel &model) {
  TargetDescription t;
  t.name = ("cpu:" + model.name).str();
  t.family = TargetFamily::Cpu;
  t.triple = model.triple.str();
  t.chip = model.chip.str();
  t.features = model.features.str();
  t.cpu = model.cpu;
  if (model.hostShaped) {
    TargetDescription host = detectHostTarget();
    if (StringRef(host.triple).split('-').first ==
        StringRef(t.triple).split('-').first) {
      t.cpu.cores = host.cpu.cores;
      t.cpu.l1dBytes = host.cpu.l1dBytes;
      t.cpu.l2Bytes = host.cpu.l2Bytes;
      t.cpu.l2SharedByCores = host.cpu.l2SharedByCores;
      t.cpu.l3Bytes = host.cpu.l3Bytes;
    }
  }
  return t;
}

llvm::Error invalidTarget(StringRef spec, StringRef why) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("unknown target '{0}': {1}\nvalid targets:\n{2}", spec,
                    why, describeValidTargets())
          .str());
}

} // namespace

StringRef ke::stringifyTargetFamily(TargetFamily family) {
  switch (family) {
  case TargetFamily::Cpu:
    return "cpu";
  case TargetFamily::Cuda:
    return "cuda";
  case TargetFamily::Rocm:
    return "rocm";
  }
  llvm_unreachable("unknown target family");
}

std::string ke::describeValidTargets() {
  std::string text = "  cpu                 this machine (detected)\n";
  text += "  cpu:<model>         ";
  text += llvm::join(llvm::map_range(kCpuModels,
                                     [](const CpuModel &m) { return m.name; }),
                     ", ");
  text += "\n  cuda:<sm>           " + listGpuChips(TargetFamily::Cuda);
  text += "\n  cuda:<sm>+tf32      f32 contractions on TF32 tensor cores (sm_80 "
          "and later; changes numerics)";
  text += "\n  cuda:<sm>+3xtf32    f32 contractions as three TF32 products each "
          "(about 21 mantissa bits)";
  text += "\n  cuda:<sm>+mfma-emulation  16-bit contractions as ROCm's gpu.mfma "
          "kernels, MFMA emulated (a check of those kernels on NVIDIA GPUs; "
          "slow)";
  text += "\n  rocm:<gfx>          " + listGpuChips(TargetFamily::Rocm);
  return text;
}

llvm::Expected<TargetDescription> ke::parseTarget(StringRef spec) {
  auto [family, model] = spec.split(':');
  bool hasModel = spec.contains(':');
  if (family == "cpu") {
    if (!hasModel || model == "native")
      return detectHostTarget();
    for (const CpuModel &m : kCpuModels)
      if (m.name == model)
        return fromCpuModel(m);
    return invalidTarget(spec, "no such CPU model");
  }
  if (family == "cuda" || family == "rocm") {
    TargetFamily gpuFamily =
        family == "cuda" ? TargetFamily::Cuda : TargetFamily::Rocm;
    auto [chip, option] = model.split('+');
    bool tf32 = option == "tf32" || option == "3xtf32";
    bool mfmaEmulation = option == "mfma-emulation";
    if (model.contains('+') && !tf32 && !mfmaEmulation)
      return invalidTarget(spec, "the GPU target options are +tf32, "
                                 "+3xtf32 and +mfma-emulation");
    if (mfmaEmulation && gpuFamily != TargetFamily::Cuda)
      return invalidTarget(spec, "+mfma-emulation needs a CUDA target (ROCm "
                                 "targets run MFMA itself)");
    if (tf32 && (gpuFamily != TargetFamily::Cuda ||
                 getCudaComputeCapability(chip) < 80))
      return invalidTarget(spec, "+" + option.str() +
                                     " needs a CUDA target of sm_80 or "
                                     "later (TF32 tensor cores)");
    for (const GpuArch &arch : kGpuArchs) {
      if (arch.family != gpuFamily || arch.chip != chip)
        continue;
      TargetDescription t;
      t.name = spec.str();
      t.family = gpuFamily;
      t.triple = gpuTriple(gpuFamily).str();
      t.chip = arch.chip.str();
      t.features = arch.features.str();
      t.gpu = arch.gpu;
      t.allowTF32 = tf32;
      t.tf32x3 = option == "3xtf32";
      t.emulateMfma = mfmaEmulation;
      return t;
    }
    if (!hasModel)
      return invalidTarget(spec, gpuFamily == TargetFamily::Cuda
                                     ? "name the architecture, e.g. cuda:sm_90"
                                     : "name the architecture, e.g. "
                                       "rocm:gfx942");
    return invalidTarget(spec, gpuFamily == TargetFamily::Cuda
                                   ? "no such CUDA architecture"
                                   : "no such AMD GPU architecture");
  }
  return invalidTarget(spec, "expected a family of cpu, cuda or rocm");
}

std::optional<unsigned> ke::getFixedSveVscale(const TargetDescription &t) {
  llvm::SmallVector<StringRef> features;
  StringRef(t.features).split(features, ',');
  if (!t.isCpu() || t.cpu.scalableVectors || t.cpu.vectorBits < 128 ||
      !StringRef(t.triple).starts_with("aarch64") ||
      !llvm::is_contained(features, "+sve"))
    return std::nullopt;
  return t.cpu.vectorBits / 128;
}

int64_t ke::getCudaComputeCapability(StringRef chip) {
  if (!chip.consume_front("sm_"))
    return 0;
  chip = chip.take_while([](char c) { return llvm::isDigit(c); });
  int64_t value = 0;
  return chip.getAsInteger(10, value) ? 0 : value;
}

llvm::json::Value ke::toJSON(const TargetDescription &t) {
  llvm::json::Object o{{"name", t.name},
                       {"family", stringifyTargetFamily(t.family)},
                       {"triple", t.triple},
                       {"chip", t.chip},
                       {"features", t.features},
                       {"detected_from_host", t.detectedFromHost}};
  if (t.isCpu()) {
    o["cores"] = t.cpu.cores;
    o["vector_bits"] = t.cpu.vectorBits;
    o["scalable_vectors"] = t.cpu.scalableVectors;
    o["l1d_bytes"] = t.cpu.l1dBytes;
    o["l2_bytes"] = t.cpu.l2Bytes;
    o["l2_shared_by_cores"] = t.cpu.l2SharedByCores;
    o["l3_bytes"] = t.cpu.l3Bytes;
  } else {
    o["multiprocessors"] = t.gpu.multiprocessors;
    o["warp_size"] = t.gpu.warpSize;
    o["max_threads_per_block"] = t.gpu.maxThreadsPerBlock;
    o["shared_memory_per_block_bytes"] = t.gpu.sharedMemoryPerBlockBytes;
    o["registers_per_multiprocessor"] = t.gpu.registersPerMultiprocessor;
    o["max_registers_per_thread"] = t.gpu.maxRegistersPerThread;
    o["allow_tf32"] = t.allowTF32;
    o["tf32x3"] = t.tf32x3;
    o["emulate_mfma"] = t.emulateMfma;
  }
  return o;
}

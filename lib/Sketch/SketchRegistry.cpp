//===- SketchRegistry.cpp - The sketch rules of each target family --------===//
//
// A new rule is one file plus one line here.
//
// Map of the Sketch component (docs/sketches.md):
//   SketchRegistry.cpp        the rules of each family, in order
//   CpuTilingRule.cpp         cpu.tile: multi-level tiling with fusion
//   CpuRfactorRule.cpp        cpu.rfactor: reductions split across threads
//   CpuSoftmaxRule.cpp        cpu.softmax
//   CpuRowsRule.cpp           cpu.rows: row reductions fused with their reader
//   CpuLoopsRule.cpp          cpu.loops, cpu.loops.parallel: the op's own
//                             loops (one thread, all cores)
//   GpuMmaRule.cpp            gpu.mma: 16-bit matmuls on tensor cores
//   GpuWgmmaRule.cpp          gpu.wgmma: the same on sm_90a's wgmma
//   GpuMfmaRule.cpp           gpu.mfma: the same on CDNA's MFMA (ROCm)
//   GpuFfmaRule.cpp           gpu.ffma: f32 GEMMs on CUDA cores, a built kernel
//   GpuContraction            what the four share
//   GpuTileRule.cpp           gpu.tile: contractions over blocks, threads
//   GpuElementwiseRule.cpp    gpu.elementwise
//   GpuReduceRule.cpp         gpu.reduce: cross-thread reductions
//   GpuSoftmaxRule.cpp        gpu.softmax
//   GpuRowNormRule.cpp        gpu.rownorm: norms, a row per block
//   GpuTransposeRule.cpp      gpu.transpose: through shared tiles, built
//                             by a pass
//   GpuColumnReduceRule.cpp   gpu.colreduce: reductions along an outer
//                             loop, built by a pass
//   GpuTiling.cpp             the block/thread tiling gpu.tile and
//                             gpu.elementwise share (GpuTilingParams)
//   RuleSupport, CpuSupport,  what the rules share: all of them, the CPU
//     GpuSupport              ones, the GPU ones
//   KnobSpace.cpp             knobs, choices, assignments
//   ScriptWriter.cpp          transform scripts as text
//   LoopNestDescription.cpp   tiling levels of a scheduled nest (features)
//
//===----------------------------------------------------------------------===//

#include "CpuRules.h"
#include "GpuRules.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-sketch"

using namespace ke;

llvm::ArrayRef<const SketchRule *> ke::getSketchRules(TargetFamily family) {
  // The first rule that matches (and prefers it, see prefersDefault) gives
  // the untuned default; the search samples all that match.
  // cpu.loops and cpu.loops.parallel (the op's own loops, on one thread or
  // all cores) come last: never the default, always candidates as fast as
  // the reference.
  static const SketchRule *const cpuRules[] = {
      &getCpuSoftmaxRule(), &getCpuRowsRule(),     &getCpuTilingRule(),
      &getCpuRfactorRule(), &getCpuLoopsRule(),    &getCpuParallelLoopsRule()};
  // gpu.elementwise takes every structured op, so it comes last.
  // gpu.wgmma (sm_90a only) before gpu.reduce: a 16-bit GEMM with a small
  // output and a long K is the tensor cores' with K split, not a matvec.
  // gpu.mfma (ROCm CDNA only) likewise.
  static const SketchRule *const cudaRules[] = {
      &getGpuSoftmaxRule(), &getGpuArgRowRule(), &getGpuWgmmaRule(),
      &getGpuMfmaRule(),
      &getGpuReduceRule(),
      &getGpuMmaRule(),
      &getGpuFfmaRule(),
      &getGpuTileRule(),
      &getGpuRowNormRule(), &getGpuTransposeRule(),
      &getGpuColumnReduceRule(),
      &getGpuElementwiseRule()};
  switch (family) {
  case TargetFamily::Cpu:
    return cpuRules;
  // The GPU rules take the warp (wavefront) size, LDS and register limits
  // from the target, so ROCm uses them as they are.
  case TargetFamily::Cuda:
  case TargetFamily::Rocm:
    return cudaRules;
  }
  return {};
}

bool ke::ruleApplies(const SketchRule &rule, mlir::Operation *anchor,
                     const TargetDescription &target) {
  if (!rule.matches(anchor, target))
    return false;
  return llvm::none_of(rule.getKnobSpace(anchor, target).knobs,
                       [](const Knob &knob) { return knob.choices.empty(); });
}

const SketchRule *ke::selectSketchRule(mlir::Operation *anchor,
                                       const TargetDescription &target) {
  const SketchRule *first = nullptr;
  for (const SketchRule *rule : getSketchRules(target.family)) {
    bool matched = ruleApplies(*rule, anchor, target);
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] " << rule->getName()
               << (matched ? " matches " : " does not match ")
               << anchor->getName() << " on " << target.name << "\n");
    if (!matched)
      continue;
    if (rule->prefersDefault(anchor, target))
      return rule;
    if (!first)
      first = rule;
  }
  LLVM_DEBUG(if (!first) llvm::dbgs() << "[" DEBUG_TYPE "] no rule for "
                                      << anchor->getName() << "\n");
  return first;
}

const SketchRule *ke::findSketchRule(llvm::StringRef name) {
  for (TargetFamily family :
       {TargetFamily::Cpu, TargetFamily::Cuda, TargetFamily::Rocm})
    for (const SketchRule *rule : getSketchRules(family))
      if (rule->getName() == name)
        return rule;
  return nullptr;
}

//===- SketchRegistry.cpp - The sketch rules of each target family --------===//
//
// A new rule is one file plus one line here.
//
//===----------------------------------------------------------------------===//

#include "CpuRules.h"
#include "GpuRules.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-sketch"

using namespace ke;

llvm::ArrayRef<const SketchRule *> ke::getSketchRules(TargetFamily family) {
  // The first rule that matches gives the untuned default; the search
  // samples all that match.
  static const SketchRule *const cpuRules[] = {
      &getCpuSoftmaxRule(), &getCpuTilingRule(), &getCpuRfactorRule()};
  // gpu.elementwise takes every structured op, so it comes last.
  static const SketchRule *const cudaRules[] = {
      &getGpuSoftmaxRule(), &getGpuReduceRule(), &getGpuTileRule(),
      &getGpuRowNormRule(), &getGpuElementwiseRule()};
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

const SketchRule *ke::selectSketchRule(mlir::Operation *anchor,
                                       const TargetDescription &target) {
  for (const SketchRule *rule : getSketchRules(target.family)) {
    bool matched = rule->matches(anchor, target);
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] " << rule->getName()
               << (matched ? " matches " : " does not match ")
               << anchor->getName() << " on " << target.name << "\n");
    if (matched)
      return rule;
  }
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] no rule for "
                          << anchor->getName() << "\n");
  return nullptr;
}

const SketchRule *ke::findSketchRule(llvm::StringRef name) {
  for (TargetFamily family :
       {TargetFamily::Cpu, TargetFamily::Cuda, TargetFamily::Rocm})
    for (const SketchRule *rule : getSketchRules(family))
      if (rule->getName() == name)
        return rule;
  return nullptr;
}

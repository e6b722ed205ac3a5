//===- GpuTileRule.cpp - Multi-level tiling for GPU contractions ----------===//
//
// gpu.tile: "SSSRRSRS" tiling of contractions and convolutions (matmul,
// batch_matmul, matvec, conv in any layout): block tiles, shared-memory
// stages of the reduction, thread (register) tiles, inner reduction tiles;
// see GpuTiling.h and docs/sketches.md.
//
//===----------------------------------------------------------------------===//

#include "GpuRules.h"
#include "GpuTiling.h"

#include "ke/Workload/Workload.h"

using namespace mlir;
using namespace ke;

namespace {

class GpuTileRule final : public GpuTilingRule {
public:
  GpuTileRule() : GpuTilingRule(GpuTilingParams::forContractions()) {}

  llvm::StringRef getName() const override { return "gpu.tile"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    auto op = dyn_cast<linalg::LinalgOp>(anchor);
    if (!target.isGpu() || !op || !isStaticTensorOp(op))
      return false;
    WorkloadKind kind = classifyWorkload(op);
    return kind == WorkloadKind::Contraction ||
           kind == WorkloadKind::Convolution;
  }
};

} // namespace

const SketchRule &ke::getGpuTileRule() {
  static const GpuTileRule rule;
  return rule;
}

//===- GpuElementwiseRule.cpp - Parallel loops over blocks and threads ----===//
//
// gpu.elementwise: every structured op on static tensors (elementwise ops,
// pooling, fills, copies, and reductions the other rules do not take): the
// innermost parallel loops are tiled over enough blocks to fill the GPU,
// each thread takes a vector-wide tile (128-bit loads and stores), and
// reduction loops (pooling windows) run inside the thread. See GpuTiling.h.
//
//===----------------------------------------------------------------------===//

#include "GpuRules.h"
#include "GpuTiling.h"

using namespace mlir;
using namespace ke;

namespace {

class GpuElementwiseRule final : public GpuTilingRule {
public:
  GpuElementwiseRule() : GpuTilingRule(GpuTilingParams::forElementwise()) {}

  llvm::StringRef getName() const override { return "gpu.elementwise"; }

  bool matches(Operation *anchor,
               const TargetDescription &target) const override {
    auto op = dyn_cast<linalg::LinalgOp>(anchor);
    // Row reductions fused into the kernel are gpu.rownorm's: tiled by
    // this rule they would stay outside the launch.
    return target.isGpu() && op && isStaticTensorOp(op) &&
           findKernelNeighbours(anchor).rowReductions == 0;
  }
};

} // namespace

const SketchRule &ke::getGpuElementwiseRule() {
  static const GpuElementwiseRule rule;
  return rule;
}

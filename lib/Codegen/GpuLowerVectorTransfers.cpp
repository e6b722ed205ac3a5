//===- GpuLowerVectorTransfers.cpp - Transfers to loads and stores --------===//
//
// ke-gpu-lower-vector-transfers (ke/Codegen/Passes.td), a step of the GPU lowering.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_GPULOWERVECTORTRANSFERSPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// After convert-vector-to-scf{full-unroll} (the step before it), vector
/// transfers become vector.load/store: the NVVM conversion lowers neither
/// transfers nor memrefs outside the default address space itself.
LogicalResult lowerVectorTransfers(ModuleOp module) {
  RewritePatternSet patterns(module.getContext());
  // Transposed and broadcasting reads first become minor-identity ones; n-D
  // broadcasts, transposes and shape casts become 1-D vector ops, which the
  // NVVM conversion handles.
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  vector::populateVectorTransferLoweringPatterns(patterns,
                                                 /*maxTransferRank=*/1);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  // n-D insert/extract_strided_slice (a vectorized strided convolution's
  // register tiles): convert-gpu-to-nvvm has no lowering for them, and the
  // kernel failed in translation with an unrealized cast.
  vector::populateVectorInsertExtractStridedSliceTransforms(patterns);
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::EltWise);
  return applyPatternsGreedily(module, std::move(patterns));
}

struct GpuLowerVectorTransfersPass : ke::impl::GpuLowerVectorTransfersPassBase<GpuLowerVectorTransfersPass> {
  void runOnOperation() override {
    if (failed(lowerVectorTransfers(getOperation())))
      signalPassFailure();
  }
};

} // namespace

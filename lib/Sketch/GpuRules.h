//===- GpuRules.h - The GPU sketch rules ------------------------*- C++ -*-===//
//
// GPU sketches map the anchor's outer parallel loops to blocks and threads
// with scf.forall (#gpu.block / #gpu.thread mappings), keep reductions and
// the rest of the nest in each thread, vectorize, bufferize and map the
// foralls to a gpu.launch themselves, so a script is complete and
// replayable on its own (ke/Codegen/GpuPipeline.h lowers the result).
// Everything about the machine comes from the target's GpuDescription: the
// warp (wavefront) size, threads and shared memory per block, registers.
// What the rules share is declared in GpuSupport.h.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_SKETCH_GPURULES_H
#define KE_LIB_SKETCH_GPURULES_H

#include "ke/Sketch/SketchRule.h"

namespace ke {

/// Contractions and convolutions: block, thread and register tiles,
/// reduction tiles, shared-memory promotion (GpuTileRule.cpp).
const SketchRule &getGpuTileRule();
/// 16-bit matmuls on tensor cores with mma.sync (GpuMmaRule.cpp).
const SketchRule &getGpuMmaRule();
/// f32 GEMMs and convolutions on CUDA cores, on a kernel ke-gpu-ffma-matmuls
/// builds (GpuFfmaRule.cpp).
const SketchRule &getGpuFfmaRule();
/// 16-bit matmuls on Hopper's warpgroup MMA, sm_90a (GpuWgmmaRule.cpp).
const SketchRule &getGpuWgmmaRule();
/// 16-bit matmuls on AMD CDNA's matrix cores, MFMA (GpuMfmaRule.cpp).
const SketchRule &getGpuMfmaRule();
/// Reductions split across the threads of a block (GpuReduceRule.cpp).
const SketchRule &getGpuReduceRule();
/// linalg.softmax over its last dimension: a block or warp per row, or a
/// kernel built by ke-gpu-row-softmax (GpuSoftmaxRule.cpp).
const SketchRule &getGpuSoftmaxRule();
/// argmax / argmin over rows on a kernel built by ke-gpu-row-argmax
/// (GpuArgRowRule.cpp).
const SketchRule &getGpuArgRowRule();
/// An elementwise op with the row reductions it reads (norms, log-softmax):
/// one row per block, every part split over its threads (GpuRowNormRule.cpp).
const SketchRule &getGpuRowNormRule();
/// Reductions along a loop that is not the innermost (BatchNorm's
/// statistics), columns over threads, on a kernel ke-gpu-column-reduce
/// builds (GpuColumnReduceRule.cpp).
const SketchRule &getGpuColumnReduceRule();
/// Transposes that move the innermost dimension, through shared tiles, on a
/// kernel ke-gpu-transpose builds (GpuTransposeRule.cpp).
const SketchRule &getGpuTransposeRule();
/// Everything else (elementwise, pooling, fills, reductions that cannot be
/// split): parallel loops over blocks and threads (GpuElementwiseRule.cpp).
const SketchRule &getGpuElementwiseRule();

} // namespace ke

#endif // KE_LIB_SKETCH_GPURULES_H

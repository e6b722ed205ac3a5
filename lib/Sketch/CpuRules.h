//===- CpuRules.h - The CPU sketch rules ------------------------*- C++ -*-===//
#ifndef KE_LIB_SKETCH_CPURULES_H
#define KE_LIB_SKETCH_CPURULES_H

#include "ke/Sketch/SketchRule.h"

namespace ke {

/// Multi-level tiling of any linalg structured op (CpuTilingRule.cpp).
const SketchRule &getCpuTilingRule();
/// Reductions split into parallel partial reductions (CpuRfactorRule.cpp).
const SketchRule &getCpuRfactorRule();
/// linalg.softmax: decompose, then tile rows across threads (CpuSoftmaxRule.cpp).
const SketchRule &getCpuSoftmaxRule();
/// Row reductions fused with the elementwise op that reads them, in blocks
/// of rows across threads (CpuRowsRule.cpp).
const SketchRule &getCpuRowsRule();
/// No schedule: the op's own loops, as the reference (CpuLoopsRule.cpp).
const SketchRule &getCpuLoopsRule();
/// cpu.loops.parallel: the same loops, the outermost split across the cores.
const SketchRule &getCpuParallelLoopsRule();

} // namespace ke

#endif // KE_LIB_SKETCH_CPURULES_H

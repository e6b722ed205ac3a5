//===- CpuSupport.h - What the CPU sketch rules share -----------*- C++ -*-===//
//
// Knob helpers that several CPU rules use; CpuSupport.cpp defines them. The
// rules themselves are in CpuRules.h.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_SKETCH_CPUSUPPORT_H
#define KE_LIB_SKETCH_CPUSUPPORT_H

#include "RuleSupport.h"

#include "ke/Sketch/KnobSpace.h"
#include "ke/Target/Target.h"

#include "mlir/IR/BuiltinTypes.h"

namespace ke {

/// The `threads` knob: 1, 2, 4, ... up to `cores`; the default is `cores`
/// when `parallelByDefault`, else 1.
Knob makeThreadsKnob(unsigned cores, bool parallelByDefault);

/// The knobs of a row kernel over `type`'s rows (all but its last
/// dimension; rows along dimension 0 are tiled): `threads`, `forall.d0` (rows
/// per block; by default as many as fit, `buffersPerRow` row-sized buffers
/// each, in half a core's share of L2, and at most a thread's share of the
/// rows) and `vec` (elements of a row handled at once, one to four vectors;
/// by default one).
KnobSpace makeRowKnobs(mlir::RankedTensorType type,
                       const TargetDescription &target, int64_t buffersPerRow);

} // namespace ke

#endif // KE_LIB_SKETCH_CPUSUPPORT_H

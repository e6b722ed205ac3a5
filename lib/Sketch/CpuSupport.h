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

namespace ke {

/// The `threads` knob: 1, 2, 4, ... up to `cores`; the default is `cores`
/// when `parallelByDefault`, else 1.
Knob makeThreadsKnob(unsigned cores, bool parallelByDefault);

} // namespace ke

#endif // KE_LIB_SKETCH_CPUSUPPORT_H

//===- CpuSupport.cpp - What the CPU sketch rules share -------------------===//
//
// Kept out of the rules' files so that each rule file holds one rule, and
// out of SketchRegistry.cpp, which only lists the rules.
//
//===----------------------------------------------------------------------===//

#include "CpuSupport.h"

using namespace ke;

Knob ke::makeThreadsKnob(unsigned cores, bool parallelByDefault) {
  Knob threads{"threads", {}, 0};
  for (unsigned t = 1; t < cores; t *= 2)
    threads.choices.push_back(t);
  threads.choices.push_back(cores);
  threads.defaultIndex = parallelByDefault ? threads.choices.size() - 1 : 0;
  return threads;
}

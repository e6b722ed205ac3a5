//===- Statistics.h - Significance tests on repeated timings ----*- C++ -*-===//
//
// Droplet search moves only when a neighbour is faster beyond the noise of
// the measurements: Welch's t-test (unequal variances) on the repeated
// timings of two candidates.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_STATISTICS_H
#define KE_SEARCH_STATISTICS_H

#include "llvm/ADT/ArrayRef.h"

namespace ke {

/// One-sided p-value of Welch's t-test for "mean(a) < mean(b)". 1 when
/// either sample has fewer than two values (nothing can be concluded); with
/// zero variance in both, 0 when mean(a) < mean(b) and 1 otherwise.
double welchLessPValue(llvm::ArrayRef<double> a, llvm::ArrayRef<double> b);

} // namespace ke

#endif // KE_SEARCH_STATISTICS_H

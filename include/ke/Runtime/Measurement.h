//===- Measurement.h - Timing by ke's measurement protocol ------*- C++ -*-===//
//
// CPU side of the protocol in docs/measurement.md: warm-up runs first, then
// repeats until their total passes a floor (and at least a minimum number),
// each run timed with a monotonic clock around the call only; the median is
// reported and every repeat is kept. The caller's `prepare` runs before every
// call, outside the timed region (it rotates input sets and poisons or
// restores outputs).
//
//===----------------------------------------------------------------------===//
#ifndef KE_RUNTIME_MEASUREMENT_H
#define KE_RUNTIME_MEASUREMENT_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

namespace ke {

struct MeasureOptions {
  unsigned warmupRuns = 1;
  unsigned minRepeats = 3;
  unsigned maxRepeats = 1000;
  /// Keep repeating until the timed runs add up to this many seconds.
  double minTotalSeconds = 0.1;
  /// Stop repeating after this much time in timed runs, even below
  /// minRepeats (very slow candidates).
  double maxTotalSeconds = 2.0;
};

struct Measurement {
  /// Seconds of every timed run, in order.
  llvm::SmallVector<double> seconds;
  double median = 0;
};

/// Median of `values` (the mean of the two middle ones for even counts).
double median(llvm::ArrayRef<double> values);

/// The protocol's loop over runs that time themselves (device events on a
/// GPU): `timedRun` prepares, runs and returns the seconds of one run;
/// warm-up runs are discarded.
llvm::Expected<Measurement>
measureRuns(llvm::function_ref<llvm::Expected<double>()> timedRun,
            const MeasureOptions &options);

/// Times `run` (called with the run number) by the protocol above.
llvm::Expected<Measurement>
measure(llvm::function_ref<void(unsigned run)> prepare,
        llvm::function_ref<llvm::Error()> run, const MeasureOptions &options);

} // namespace ke

#endif // KE_RUNTIME_MEASUREMENT_H

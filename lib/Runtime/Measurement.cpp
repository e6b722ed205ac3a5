//===- Measurement.cpp - Timing by ke's measurement protocol --------------===//

#include "ke/Runtime/Measurement.h"

#include "llvm/ADT/STLExtras.h"

#include <chrono>

using namespace ke;

double ke::median(llvm::ArrayRef<double> values) {
  if (values.empty())
    return 0;
  llvm::SmallVector<double> sorted(values.begin(), values.end());
  llvm::sort(sorted);
  size_t mid = sorted.size() / 2;
  return sorted.size() % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

llvm::Expected<Measurement>
ke::measureRuns(llvm::function_ref<llvm::Expected<double>()> timedRun,
                const MeasureOptions &options) {
  for (unsigned i = 0; i < options.warmupRuns; ++i)
    if (llvm::Expected<double> seconds = timedRun(); !seconds)
      return seconds.takeError();
  Measurement measurement;
  double total = 0;
  while (measurement.seconds.size() < options.maxRepeats &&
         total < options.maxTotalSeconds &&
         (measurement.seconds.size() < options.minRepeats ||
          total < options.minTotalSeconds)) {
    llvm::Expected<double> seconds = timedRun();
    if (!seconds)
      return seconds.takeError();
    measurement.seconds.push_back(*seconds);
    total += *seconds;
  }
  measurement.median = median(measurement.seconds);
  return measurement;
}

llvm::Expected<Measurement>
ke::measure(llvm::function_ref<void(unsigned run)> prepare,
            llvm::function_ref<llvm::Error()> run,
            const MeasureOptions &options) {
  unsigned runNumber = 0;
  return measureRuns(
      [&]() -> llvm::Expected<double> {
        prepare(runNumber++);
        auto start = std::chrono::steady_clock::now();
        llvm::Error error = run();
        auto stop = std::chrono::steady_clock::now();
        if (error)
          return std::move(error);
        return std::chrono::duration<double>(stop - start).count();
      },
      options);
}

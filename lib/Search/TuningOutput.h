//===- TuningOutput.h - Progress, logs and records of a tuning run -*- C++ -*-===//
//
// Internal to lib/Search: what a tuning run shows and writes while it runs.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_SEARCH_TUNINGOUTPUT_H
#define KE_LIB_SEARCH_TUNINGOUTPUT_H

#include "ke/Database/Database.h"
#include "ke/Search/SearchTask.h"
#include "ke/Workload/Workload.h"

#include <chrono>

namespace ke {

/// A live progress line on stderr: redrawn in place on a terminal, printed
/// about every tenth of the budget otherwise (logs stay readable).
class ProgressLine {
public:
  ProgressLine(bool enabled, unsigned totalTrials);
  /// Reports candidate `done` (of the run) of `workload` (`index` of
  /// `numWorkloads`) and the workload's best time.
  void update(unsigned done, unsigned index, unsigned numWorkloads,
              const Workload &workload, SearchPhase phase,
              std::optional<double> bestSeconds);
  /// Ends the line on a terminal.
  void finish();
  /// A note on its own line (the progress line is redrawn after it).
  void note(llvm::StringRef text);
  double getElapsedSeconds() const;

private:
  bool enabled, terminal, drawn = false;
  unsigned totalTrials;
  std::chrono::steady_clock::time_point start;
};

/// `trial,workload,op,phase,seconds,best_seconds,elapsed_seconds`, one row
/// per measured candidate (seconds empty for failed ones).
class ConvergenceLog {
public:
  explicit ConvergenceLog(llvm::raw_ostream *os);
  void add(unsigned trial, const Workload &workload,
           const MeasuredCandidate &candidate,
           std::optional<double> bestSeconds, double elapsedSeconds);

private:
  llvm::raw_ostream *os;
};

/// The database form of a measured candidate of `workload` on `target`
/// (makeScheduleRecord, ke/TunedSchedules, with the candidate's outcome).
TuningRecord makeTuningRecord(const CandidateRecord &candidate,
                              const Workload &workload,
                              const TargetDescription &target,
                              llvm::StringRef role);

/// Back from the database: the schedule (readRecordSchedule, rebuilt for
/// `kernelAnchor`) and its outcome; fails for records of other sketches or
/// knob spaces.
llvm::Expected<std::pair<Schedule, CandidateRecord>>
readTuningRecord(const TuningRecord &record, mlir::Operation *kernelAnchor,
                 const TargetDescription &target);

} // namespace ke

#endif // KE_LIB_SEARCH_TUNINGOUTPUT_H

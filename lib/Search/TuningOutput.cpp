//===- TuningOutput.cpp - Progress, logs and records of a tuning run ------===//

#include "TuningOutput.h"

#include "ke/TunedSchedules/TunedSchedules.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"

#include <ctime>

using namespace mlir;
using namespace ke;

ProgressLine::ProgressLine(bool enabled, unsigned totalTrials)
    : enabled(enabled),
      terminal(llvm::sys::Process::StandardErrIsDisplayed()),
      totalTrials(totalTrials), start(std::chrono::steady_clock::now()) {}

double ProgressLine::getElapsedSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

void ProgressLine::update(unsigned done, unsigned index, unsigned numWorkloads,
                          const Workload &workload, SearchPhase phase,
                          std::optional<double> bestSeconds) {
  if (!enabled)
    return;
  bool last = done >= totalTrials;
  if (!terminal && !last && done % std::max(1u, totalTrials / 10) != 0)
    return;
  double elapsed = getElapsedSeconds();
  double eta = done ? elapsed / done * (totalTrials - std::min(done, totalTrials))
                    : 0;
  std::string best = "-";
  if (bestSeconds && workload.flops)
    best = llvm::formatv("{0:F2} GFLOP/s", *workload.flops / *bestSeconds / 1e9);
  else if (bestSeconds)
    best = llvm::formatv("{0:F4} ms", *bestSeconds * 1e3);
  llvm::errs() << (terminal ? "\r\x1b[K" : "")
               << llvm::formatv("[ke] workload {0}/{1} {2} ({3}): trial "
                                "{4}/{5}, best {6}, ETA {7:F0} s",
                                index + 1, numWorkloads, workload.opName,
                                stringifySearchPhase(phase), done, totalTrials,
                                best, eta)
               << (terminal ? "" : "\n");
  drawn = terminal;
}

void ProgressLine::finish() {
  if (drawn)
    llvm::errs() << "\n";
  drawn = false;
}

void ProgressLine::note(llvm::StringRef text) {
  if (drawn)
    llvm::errs() << "\r\x1b[K";
  llvm::errs() << "[ke] " << text << "\n";
  drawn = false;
}

ConvergenceLog::ConvergenceLog(llvm::raw_ostream *os) : os(os) {
  if (os)
    *os << "trial,workload,op,phase,seconds,best_seconds,elapsed_seconds\n";
}

void ConvergenceLog::add(unsigned trial, const Workload &workload,
                         const MeasuredCandidate &candidate,
                         std::optional<double> bestSeconds,
                         double elapsedSeconds) {
  if (!os)
    return;
  *os << trial << ',' << workload.key << ',' << workload.opName << ','
      << stringifySearchPhase(candidate.phase) << ',';
  if (candidate.record.isValid())
    *os << llvm::formatv("{0:e}", candidate.record.measurement.median);
  *os << ',';
  if (bestSeconds)
    *os << llvm::formatv("{0:e}", *bestSeconds);
  *os << ',' << llvm::formatv("{0:F3}", elapsedSeconds) << '\n';
  os->flush();
}

TuningRecord ke::makeTuningRecord(const CandidateRecord &candidate,
                                  const Workload &workload,
                                  const TargetDescription &target,
                                  llvm::StringRef role) {
  TuningRecord r = makeScheduleRecord(
      candidate.schedule ? &*candidate.schedule : nullptr, candidate.script,
      workload.key, target, role);
  if (candidate.isValid()) {
    r.seconds.assign(candidate.measurement.seconds.begin(),
                     candidate.measurement.seconds.end());
    r.medianSeconds = candidate.measurement.median;
  }
  r.error = stringifyErrorClass(candidate.error).str();
  r.message = candidate.message;
  r.timestamp = int64_t(std::time(nullptr));
  return r;
}

llvm::Expected<std::pair<Schedule, CandidateRecord>>
ke::readTuningRecord(const TuningRecord &record, Operation *kernelAnchor,
                     const TargetDescription &target) {
  llvm::Expected<Schedule> schedule =
      readRecordSchedule(record, kernelAnchor, target);
  if (!schedule)
    return schedule.takeError();
  CandidateRecord candidate;
  candidate.schedule = *schedule;
  candidate.script = record.script;
  std::optional<ErrorClass> error = parseErrorClass(record.error);
  if (!error)
    return llvm::createStringError("unknown error class '" + record.error +
                                   "'");
  candidate.error = *error;
  candidate.message = record.message;
  candidate.measurement.seconds.assign(record.seconds.begin(),
                                       record.seconds.end());
  candidate.measurement.median = record.medianSeconds;
  if (candidate.isValid() && candidate.measurement.seconds.empty())
    return llvm::createStringError("a valid record without timings");
  return std::make_pair(std::move(*schedule), std::move(candidate));
}

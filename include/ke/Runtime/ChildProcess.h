//===- ChildProcess.h - Running untrusted work in a child -------*- C++ -*-===//
//
// Candidate code can crash, hang or corrupt memory. ke runs it in a forked
// child with a time limit: the child writes a report to a pipe and exits; the
// parent gets the report, the exit code or the signal, or kills the child at
// the limit. The parent must not hold other threads when it forks (ke's
// tuning context is single-threaded for that reason).
//
//===----------------------------------------------------------------------===//
#ifndef KE_RUNTIME_CHILDPROCESS_H
#define KE_RUNTIME_CHILDPROCESS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>

namespace ke {

struct ChildResult {
  enum class Status { Exited, Signaled, TimedOut, ForkFailed };
  Status status = Status::Exited;
  int exitCode = 0;
  int signal = 0;
  /// Everything the child wrote to its report stream.
  std::string report;
  double seconds = 0;

  bool succeeded() const { return status == Status::Exited && exitCode == 0; }
  /// "exit code 3", "signal 11 (Segmentation fault)", "timed out after 10 s".
  std::string describe() const;
};

/// A child started and not yet waited for: several can run at once (the
/// parallel builds of a tuning batch). The parent reads each one's report
/// as it comes (a full pipe would block the child) and reaps it with
/// finish().
class RunningChild {
public:
  /// Forks and runs `body` in the child with a stream to the parent; the
  /// child exits with the code `body` returns. A failed fork gives a child
  /// that is already done (ForkFailed).
  static RunningChild
  start(llvm::function_ref<int(llvm::raw_ostream &report)> body,
        double timeoutSeconds);
  RunningChild(RunningChild &&other);
  RunningChild &operator=(RunningChild &&other) = delete;
  RunningChild(const RunningChild &) = delete;
  /// Kills and reaps a child that was never finished.
  ~RunningChild();

  /// True once the report ended (the child closed its end or died) or the
  /// time limit passed: finish() then does not wait long.
  bool isDone() const { return done; }
  /// Reads what the child wrote so far without blocking; marks it done at
  /// the end of its report or past its time limit.
  void readAvailable();
  /// Waits until the child is done, kills it past its time limit, reaps it.
  ChildResult finish();

  /// Waits until at least one of `children` that is not done has output or
  /// reaches its time limit (at most `maxMs`), then reads what each has.
  static void waitForAny(llvm::ArrayRef<RunningChild *> children,
                         int maxMs = 1000);

private:
  RunningChild() = default;
  int remainingMs() const;

  pid_t pid = -1;
  int fd = -1;
  bool done = true;
  bool timedOut = false;
  double timeoutSeconds = 0;
  std::chrono::steady_clock::time_point startTime;
  ChildResult result;
};

/// Forks, runs `body` in the child with a stream to the parent, and exits
/// the child with the code `body` returns. Kills the child after
/// `timeoutSeconds`.
ChildResult runInChild(llvm::function_ref<int(llvm::raw_ostream &report)> body,
                       double timeoutSeconds);

/// The work of one child: its body and its time limit.
struct ChildJob {
  std::function<int(llvm::raw_ostream &report)> body;
  double timeoutSeconds = 60;
};

/// Runs `count` items through two stages of children, as tuning builds and
/// measures a batch of candidates (docs/tuning.md, Parallel builds):
/// - `build(i)` gives item i's build child; up to `jobs` build at once, in
///   item order, ahead of the measurements;
/// - `measure(i, built)` is called in item order, once item i's build ended
///   and every earlier item finished, so that it sees their outcomes; it
///   measures item i (in a child, or a serving child) and gives the
///   outcome, or std::nullopt when there is nothing to measure (a failed
///   build). Measurements run one at a time: nothing else of this pipeline
///   measures beside them, while the builds already started go on;
/// - `finished(i, built, measured)` gets item i's outcome in item order
///   (`measured` is null when nothing was measured).
void runBuildAndMeasure(
    unsigned count, unsigned jobs, llvm::function_ref<ChildJob(unsigned)> build,
    llvm::function_ref<std::optional<ChildResult>(unsigned,
                                                   const ChildResult &)>
        measure,
    llvm::function_ref<void(unsigned, const ChildResult &, const ChildResult *)>
        finished);

} // namespace ke

#endif // KE_RUNTIME_CHILDPROCESS_H

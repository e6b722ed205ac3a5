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

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

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

/// Forks, runs `body` in the child with a stream to the parent, and exits
/// the child with the code `body` returns. Kills the child after
/// `timeoutSeconds`.
ChildResult runInChild(llvm::function_ref<int(llvm::raw_ostream &report)> body,
                       double timeoutSeconds);

} // namespace ke

#endif // KE_RUNTIME_CHILDPROCESS_H

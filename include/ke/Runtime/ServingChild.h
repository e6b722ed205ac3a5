//===- ServingChild.h - A child that serves requests one by one -*- C++ -*-===//
//
// A forked child that outlives one piece of work: the GPU evaluator's
// measuring server keeps its device context and uploaded input sets from
// one candidate to the next instead of paying for them per candidate
// (docs/tuning.md, Parallel builds). Each request is still judged like a
// one-shot child (ke/Runtime/ChildProcess.h): a request that crashes the
// child, hangs past its limit or after which the child says it cannot go
// on (a device fault poisons a GPU context) ends the child, its ChildResult
// says why, and the next request forks a new one.
//
//===----------------------------------------------------------------------===//
#ifndef KE_RUNTIME_SERVINGCHILD_H
#define KE_RUNTIME_SERVINGCHILD_H

#include "ke/Runtime/ChildProcess.h"

#include "llvm/ADT/SmallVector.h"

namespace ke {

class ServingChild {
public:
  /// Runs in the child, once per request: writes the request's report and
  /// returns whether the child can take another.
  using Handler =
      std::function<bool(llvm::StringRef request, llvm::raw_ostream &report)>;

  /// Runs in the child once, right after it is forked and before its first
  /// request: the measuring server opens its device there, while the
  /// parent goes on (builds the batch's candidates) instead of waiting.
  using WarmUp = std::function<void()>;
  explicit ServingChild(Handler handle, WarmUp warmUp = nullptr)
      : handle(std::move(handle)), warmUp(std::move(warmUp)) {}
  ~ServingChild() { stop(); }
  ServingChild(const ServingChild &) = delete;
  ServingChild &operator=(const ServingChild &) = delete;

  /// Sends `request` to the child (forking one if none runs) and waits for
  /// its report, at most `timeoutSeconds`. Exited with code 0 and the report
  /// when the child answered; Signaled, TimedOut or the exit code when the
  /// child ended on the request (then no child runs until the next call);
  /// ForkFailed when none could start.
  ChildResult call(llvm::StringRef request, double timeoutSeconds);
  /// Forks the child now unless one runs, so that its warm-up overlaps
  /// what the parent does next. False when none could start (the next
  /// call says why, as its ForkFailed result).
  bool ensureStarted();
  /// Ends the child, if one runs.
  void stop();
  /// Whether a child runs (it is forked on the first call).
  bool isRunning() const { return pid > 0; }
  /// Children forked so far (one more after each crash, hang or refusal).
  unsigned getNumStarts() const { return starts; }

private:
  /// Forks the child; false (with `why`) when it cannot.
  bool start(std::string &why);
  /// Reaps the child that ended, into `result`'s status.
  void reap(ChildResult &result, bool kill);

  Handler handle;
  WarmUp warmUp;
  pid_t pid = -1;
  int toChild = -1, fromChild = -1;
  unsigned starts = 0;
};

/// The serving children of one process that may run at once, least
/// recently used first out: each measuring server holds a device context
/// and its workload's input sets, so a tuner that moves between workloads
/// keeps the last few servers warm instead of starting one per round, and
/// stops the oldest beyond `capacity`.
class ServingChildPool {
public:
  explicit ServingChildPool(unsigned capacity) : capacity(capacity) {}
  /// Marks `child` the most recently used and counts it as running (it is
  /// about to serve); stops the least recently used others beyond the
  /// capacity.
  void use(ServingChild &child);
  /// Forgets `child` (it is being destroyed).
  void remove(ServingChild &child);
  void setCapacity(unsigned newCapacity) { capacity = newCapacity; }
  /// The children known, least recently used first.
  llvm::ArrayRef<ServingChild *> getChildren() const { return children; }

private:
  unsigned capacity;
  llvm::SmallVector<ServingChild *> children;
};

} // namespace ke

#endif // KE_RUNTIME_SERVINGCHILD_H

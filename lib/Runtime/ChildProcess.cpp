//===- ChildProcess.cpp - Running untrusted work in a child ---------------===//

#include "ke/Runtime/ChildProcess.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ke;

std::string ChildResult::describe() const {
  switch (status) {
  case Status::Exited:
    return "exit code " + std::to_string(exitCode);
  case Status::Signaled:
    return llvm::formatv("signal {0} ({1})", signal, strsignal(signal)).str();
  case Status::TimedOut:
    return llvm::formatv("timed out after {0:F1} s", seconds).str();
  case Status::ForkFailed:
    return "could not fork: " + report;
  }
  return "?";
}

RunningChild RunningChild::start(
    llvm::function_ref<int(llvm::raw_ostream &report)> body,
    double timeoutSeconds) {
  RunningChild child;
  child.timeoutSeconds = timeoutSeconds;
  child.startTime = std::chrono::steady_clock::now();
  int fds[2];
  if (pipe(fds) != 0) {
    child.result.status = ChildResult::Status::ForkFailed;
    child.result.report = strerror(errno);
    return child;
  }
  llvm::outs().flush();
  llvm::errs().flush();
  pid_t pid = fork();
  if (pid < 0) {
    child.result.status = ChildResult::Status::ForkFailed;
    child.result.report = strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return child;
  }
  if (pid == 0) {
    close(fds[0]);
    // Tools the child runs (ptxas) must not hold the report open: the
    // parent sees its end when the child ends.
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    // The report carries what matters; libraries that print on their own
    // (the JIT, OpenMP) would only clutter the parent's progress output.
    if (!getenv("KE_CHILD_STDERR")) {
      int null = open("/dev/null", O_WRONLY);
      if (null >= 0) {
        dup2(null, STDERR_FILENO);
        close(null);
      }
    }
    int code;
    {
      llvm::raw_fd_ostream report(fds[1], /*shouldClose=*/true);
      code = body(report);
      report.flush();
    }
    _exit(code); // no atexit handlers or stdio flushes of the parent's state
  }
  close(fds[1]);
  // Nor the tools that children forked later run.
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  child.pid = pid;
  child.fd = fds[0];
  child.done = false;
  return child;
}

RunningChild::RunningChild(RunningChild &&other)
    : pid(other.pid), fd(other.fd), done(other.done),
      timedOut(other.timedOut), timeoutSeconds(other.timeoutSeconds),
      startTime(other.startTime), result(std::move(other.result)) {
  other.pid = -1;
  other.fd = -1;
  other.done = true;
}

RunningChild::~RunningChild() {
  if (fd >= 0)
    close(fd);
  if (pid > 0) {
    kill(pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

int RunningChild::remainingMs() const {
  double elapsed = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - startTime)
                       .count();
  return std::max(0, int((timeoutSeconds - elapsed) * 1000));
}

void RunningChild::readAvailable() {
  if (done)
    return;
  char buffer[4096];
  while (true) {
    if (remainingMs() <= 0) {
      timedOut = done = true;
      return;
    }
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, 0);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0) {
      // poll failing is treated as the end of the report: finish() reaps.
      done = ready < 0;
      return;
    }
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      done = true; // EOF: the child closed its end (exited or is exiting)
      return;
    }
    result.report.append(buffer, n);
  }
}

void RunningChild::waitForAny(llvm::ArrayRef<RunningChild *> children,
                              int maxMs) {
  llvm::SmallVector<pollfd> fds;
  int timeoutMs = maxMs;
  for (RunningChild *child : children) {
    if (child->done)
      continue;
    fds.push_back({child->fd, POLLIN, 0});
    timeoutMs = std::min(timeoutMs, child->remainingMs());
  }
  if (fds.empty())
    return;
  if (poll(fds.data(), fds.size(), timeoutMs) < 0 && errno != EINTR)
    return;
  for (RunningChild *child : children)
    child->readAvailable();
}

ChildResult RunningChild::finish() {
  while (!done)
    waitForAny({this}, remainingMs() + 1);
  if (fd >= 0) {
    close(fd);
    fd = -1;
  }
  if (pid > 0) {
    if (timedOut)
      kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
    if (timedOut) {
      result.status = ChildResult::Status::TimedOut;
    } else if (WIFSIGNALED(status)) {
      result.status = ChildResult::Status::Signaled;
      result.signal = WTERMSIG(status);
    } else {
      result.status = ChildResult::Status::Exited;
      result.exitCode = WEXITSTATUS(status);
    }
  }
  result.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - startTime)
                       .count();
  return std::move(result);
}

ChildResult ke::runInChild(
    llvm::function_ref<int(llvm::raw_ostream &report)> body,
    double timeoutSeconds) {
  return RunningChild::start(body, timeoutSeconds).finish();
}

void ke::runBuildAndMeasure(
    unsigned count, unsigned jobs, llvm::function_ref<ChildJob(unsigned)> build,
    llvm::function_ref<std::optional<ChildResult>(unsigned,
                                                   const ChildResult &)>
        measure,
    llvm::function_ref<void(unsigned, const ChildResult &, const ChildResult *)>
        finished) {
  jobs = std::max(1u, jobs);
  std::vector<std::optional<RunningChild>> building(count);
  std::vector<std::optional<ChildResult>> built(count);
  unsigned nextBuild = 0, running = 0, next = 0;
  while (next < count) {
    while (running < jobs && nextBuild < count) {
      ChildJob job = build(nextBuild);
      building[nextBuild].emplace(
          RunningChild::start(job.body, job.timeoutSeconds));
      ++running;
      ++nextBuild;
    }
    for (unsigned i = next; i < nextBuild; ++i)
      if (building[i] && building[i]->isDone()) {
        built[i] = building[i]->finish();
        building[i].reset();
        --running;
      }
    if (built[next]) {
      // Builds already started go on while item `next` is measured; their
      // reports wait in their pipes.
      std::optional<ChildResult> measured = measure(next, *built[next]);
      finished(next, *built[next], measured ? &*measured : nullptr);
      built[next].reset();
      ++next;
      continue;
    }
    llvm::SmallVector<RunningChild *> children;
    for (unsigned i = next; i < nextBuild; ++i)
      if (building[i])
        children.push_back(&*building[i]);
    RunningChild::waitForAny(children);
  }
}

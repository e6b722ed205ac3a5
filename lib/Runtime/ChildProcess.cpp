//===- ChildProcess.cpp - Running untrusted work in a child ---------------===//

#include "ke/Runtime/ChildProcess.h"

#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <chrono>
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

ChildResult ke::runInChild(
    llvm::function_ref<int(llvm::raw_ostream &report)> body,
    double timeoutSeconds) {
  ChildResult result;
  auto start = std::chrono::steady_clock::now();
  int fds[2];
  if (pipe(fds) != 0) {
    result.status = ChildResult::Status::ForkFailed;
    result.report = strerror(errno);
    return result;
  }
  llvm::outs().flush();
  llvm::errs().flush();
  pid_t pid = fork();
  if (pid < 0) {
    result.status = ChildResult::Status::ForkFailed;
    result.report = strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return result;
  }
  if (pid == 0) {
    close(fds[0]);
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
  bool timedOut = false;
  char buffer[4096];
  while (true) {
    double elapsed = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    int remainingMs = int((timeoutSeconds - elapsed) * 1000);
    if (remainingMs <= 0) {
      timedOut = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, remainingMs);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0) {
      timedOut = ready == 0;
      break;
    }
    ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break; // EOF: the child closed its end (exited or is exiting)
    result.report.append(buffer, n);
  }
  close(fds[0]);
  if (timedOut)
    kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (timedOut) {
    result.status = ChildResult::Status::TimedOut;
  } else if (WIFSIGNALED(status)) {
    result.status = ChildResult::Status::Signaled;
    result.signal = WTERMSIG(status);
  } else {
    result.status = ChildResult::Status::Exited;
    result.exitCode = WEXITSTATUS(status);
  }
  return result;
}

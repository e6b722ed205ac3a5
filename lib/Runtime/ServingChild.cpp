//===- ServingChild.cpp - A child that serves requests one by one ---------===//
//
// Framing on the two pipes: a request is its length (8 bytes) and its
// bytes; an answer is its length, its bytes and one byte, 1 when the child
// takes another request. The end of the answer pipe before a whole answer
// means the child died.
//
//===----------------------------------------------------------------------===//

#include "ke/Runtime/ServingChild.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ke;

/// Moves exactly `size` bytes through `transfer` (::read or ::write),
/// going on after interrupted and partial calls; false at the end of the
/// pipe or on an error (a closed pipe).
template <typename Transfer, typename Byte>
static bool transferAll(Transfer transfer, int fd, Byte *bytes, size_t size) {
  while (size) {
    ssize_t n = transfer(fd, bytes, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    bytes += n;
    size -= n;
  }
  return true;
}

static bool writeAll(int fd, const void *data, size_t size) {
  return transferAll(::write, fd, static_cast<const char *>(data), size);
}

/// Blocks until all of `size` bytes came.
static bool readAll(int fd, void *data, size_t size) {
  return transferAll(::read, fd, static_cast<char *>(data), size);
}

/// writeAll from the parent: a child that died closed its end, and the
/// SIGPIPE that would then end this process is held and dropped (the
/// child's status says what happened).
static bool writeToChild(int fd, const void *data, size_t size) {
  sigset_t pipeSignal, old;
  sigemptyset(&pipeSignal);
  sigaddset(&pipeSignal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipeSignal, &old);
  bool written = writeAll(fd, data, size);
  if (!written && errno == EPIPE) {
    timespec now{0, 0};
    sigtimedwait(&pipeSignal, nullptr, &now);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return written;
}

bool ServingChild::start(std::string &why) {
  int requests[2], answers[2];
  if (pipe(requests) != 0) {
    why = strerror(errno);
    return false;
  }
  if (pipe(answers) != 0) {
    why = strerror(errno);
    close(requests[0]);
    close(requests[1]);
    return false;
  }
  llvm::outs().flush();
  llvm::errs().flush();
  pid_t child = fork();
  if (child < 0) {
    why = strerror(errno);
    for (int fd : {requests[0], requests[1], answers[0], answers[1]})
      close(fd);
    return false;
  }
  if (child == 0) {
    close(requests[1]);
    close(answers[0]);
    // As RunningChild's: tools it runs must not hold the pipes, and
    // libraries that print on their own would clutter the progress line.
    fcntl(requests[0], F_SETFD, FD_CLOEXEC);
    fcntl(answers[1], F_SETFD, FD_CLOEXEC);
    if (!getenv("KE_CHILD_STDERR")) {
      int null = open("/dev/null", O_WRONLY);
      if (null >= 0) {
        dup2(null, STDERR_FILENO);
        close(null);
      }
    }
    if (warmUp)
      warmUp();
    while (true) {
      uint64_t size = 0;
      if (!readAll(requests[0], &size, sizeof(size)))
        _exit(0); // the parent stopped the server
      std::string request(size, '\0');
      if (!readAll(requests[0], request.data(), size))
        _exit(0);
      std::string report;
      bool goOn;
      {
        llvm::raw_string_ostream os(report);
        goOn = handle(request, os);
      }
      uint64_t length = report.size();
      char more = goOn ? 1 : 0;
      if (!writeAll(answers[1], &length, sizeof(length)) ||
          !writeAll(answers[1], report.data(), report.size()) ||
          !writeAll(answers[1], &more, 1) || !goOn)
        _exit(0);
    }
  }
  close(requests[0]);
  close(answers[1]);
  fcntl(requests[1], F_SETFD, FD_CLOEXEC);
  fcntl(answers[0], F_SETFD, FD_CLOEXEC);
  pid = child;
  toChild = requests[1];
  fromChild = answers[0];
  ++starts;
  return true;
}

void ServingChild::reap(ChildResult &result, bool killIt) {
  if (toChild >= 0)
    close(toChild);
  if (fromChild >= 0)
    close(fromChild);
  toChild = fromChild = -1;
  if (pid <= 0)
    return;
  if (killIt)
    kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  pid = -1;
  if (WIFSIGNALED(status)) {
    result.status = ChildResult::Status::Signaled;
    result.signal = WTERMSIG(status);
  } else {
    result.status = ChildResult::Status::Exited;
    result.exitCode = WEXITSTATUS(status);
  }
}

bool ServingChild::ensureStarted() {
  std::string why;
  return pid > 0 || start(why);
}

void ServingChild::stop() {
  ChildResult ignored;
  reap(ignored, /*kill=*/true);
}

ChildResult ServingChild::call(llvm::StringRef request,
                               double timeoutSeconds) {
  auto startTime = std::chrono::steady_clock::now();
  ChildResult result;
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         startTime)
        .count();
  };
  if (pid <= 0) {
    std::string why;
    if (!start(why)) {
      result.status = ChildResult::Status::ForkFailed;
      result.report = why;
      return result;
    }
  }
  // A child that cannot read its request died: its status says why.
  uint64_t size = request.size();
  if (!writeToChild(toChild, &size, sizeof(size)) ||
      !writeToChild(toChild, request.data(), request.size())) {
    reap(result, /*kill=*/true);
    result.seconds = elapsed();
    return result;
  }
  // The answer: its length, its bytes and the go-on byte, read as they
  // come until the time limit.
  std::string answer;
  uint64_t expected = 0;
  bool haveLength = false;
  char buffer[65536];
  while (!haveLength || answer.size() < expected + 1) {
    int remainingMs = int((timeoutSeconds - elapsed()) * 1000);
    if (remainingMs <= 0) {
      reap(result, /*kill=*/true);
      result.status = ChildResult::Status::TimedOut;
      result.seconds = elapsed();
      return result;
    }
    pollfd p{fromChild, POLLIN, 0};
    int ready = poll(&p, 1, remainingMs);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0)
      continue;
    ssize_t n = read(fromChild, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      // The child died before answering in full.
      reap(result, /*kill=*/false);
      result.seconds = elapsed();
      return result;
    }
    answer.append(buffer, n);
    if (!haveLength && answer.size() >= sizeof(expected)) {
      memcpy(&expected, answer.data(), sizeof(expected));
      answer.erase(0, sizeof(expected));
      haveLength = true;
    }
  }
  result.status = ChildResult::Status::Exited;
  result.exitCode = 0;
  result.report = answer.substr(0, expected);
  bool goOn = answer[expected] != 0;
  if (!goOn) {
    // It exits after this answer: reaped now, its status kept out of this
    // request's result (which it answered).
    ChildResult ended;
    reap(ended, /*kill=*/false);
  }
  result.seconds = elapsed();
  return result;
}

void ServingChildPool::use(ServingChild &child) {
  remove(child);
  children.push_back(&child);
  // `child` counts as running: it is about to serve. The others beyond the
  // capacity are stopped, not forgotten: a stopped child forks again on its
  // next call.
  unsigned running = 1;
  for (auto it = std::next(children.rbegin()); it != children.rend(); ++it)
    if ((*it)->isRunning() && ++running > std::max(1u, capacity))
      (*it)->stop();
}

void ServingChildPool::remove(ServingChild &child) {
  llvm::erase(children, &child);
}

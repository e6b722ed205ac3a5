"""Runs one function per problem in a child process, with a time limit.

A problem may crash the process that runs it (a segfault in a compiled
kernel, an abort in a lowering) or hang (a kernel that never ends). Neither
may end the run: each task runs in a long-lived child (spawned, so CUDA
and torch start clean in it), and the parent waits at most `timeout`
seconds for its answer. A child that dies or overruns is killed, the task
gets the outcome `runtime-error` (with the exit code) or `timeout`, and
the next task starts a fresh child. The child leads a process group, and
the kill takes the whole group: a compiler it started goes too.
"""

import multiprocessing
import os
import signal
import time
import traceback


def _serve(connection, function):
    # A process group of its own, so that a kill also ends what the task
    # started (ke-opt compiling a model).
    os.setpgrp()
    while True:
        try:
            task = connection.recv()
        except EOFError:
            return
        if task is None:
            return
        try:
            result = function(task)
        except Exception as error:  # the function's own failures
            result = {"outcome": "runtime-error",
                      "detail": "%s: %s" % (type(error).__name__, error),
                      "traceback": traceback.format_exc()[-2000:]}
        connection.send(result)


class Worker:
    """Calls `function(task)` in a child process; `function` must be a
    module-level function (it is pickled by reference)."""

    def __init__(self, function, timeout):
        self.function = function
        self.timeout = timeout
        self._context = multiprocessing.get_context("spawn")
        self._process = None
        self._connection = None

    def _start(self):
        parent, child = self._context.Pipe()
        self._process = self._context.Process(
            target=_serve, args=(child, self.function), daemon=True)
        self._process.start()
        child.close()
        self._connection = parent

    def _kill(self):
        if self._process is not None:
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self._process.kill()
            self._process.join()
        self._process = None
        self._connection = None

    def run(self, task):
        """The function's result for `task`, or an outcome dict for a
        crash or a timeout; `seconds` is added either way."""
        if self._process is None or not self._process.is_alive():
            self._start()
        start = time.monotonic()
        self._connection.send(task)
        result = None
        if self._connection.poll(self.timeout):
            try:
                result = self._connection.recv()
            except EOFError:
                result = None
            if result is None:
                self._process.join(5)
                result = {"outcome": "runtime-error",
                          "detail": "the process running the problem died "
                          "(exit code %s)" % self._process.exitcode}
                self._kill()
        else:
            alive = self._process.is_alive()
            code = self._process.exitcode
            self._kill()
            result = ({"outcome": "timeout",
                       "detail": "no answer within %d s" % self.timeout}
                      if alive else
                      {"outcome": "runtime-error",
                       "detail": "the process running the problem died "
                       "(exit code %s)" % code})
        result["seconds"] = round(time.monotonic() - start, 3)
        return result

    def close(self):
        if self._process is not None and self._process.is_alive():
            try:
                self._connection.send(None)
                self._process.join(10)
            except (BrokenPipeError, OSError):
                pass
        self._kill()

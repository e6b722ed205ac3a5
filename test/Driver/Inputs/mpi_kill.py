#!/usr/bin/env python3
"""Kills a rank of an MPI tuning run mid-run (test/Driver/tune-mpi.test).

Starts `mpirun -n RANKS ke-opt tune ARGS... --records FILE`, waits until the
records file holds --after trial records, kills rank --rank's ke-opt (the
rank itself, not one of its candidate children) with SIGKILL, and waits for
mpirun to end. Prints, for FileCheck:
  killed rank R after at least N trials
  the run ended with a non-zero status     (or "... with status 0")
"""
import argparse
import os
import signal
import subprocess
import sys
import time


def is_ke_opt(pid):
    """Whether `pid` runs ke-opt (mpirun's own arguments name it too)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            program = f.read().split(b"\0")[0]
    except OSError:
        return False
    return os.path.basename(program) == b"ke-opt"


def rank_pid(rank, parents):
    """The ke-opt process of MPI rank `rank` among `parents`' children whose
    parent is not a ke-opt (candidate children inherit the rank's
    environment)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if (f"OMPI_COMM_WORLD_RANK={rank}".encode() in environ
                and is_ke_opt(int(pid)) and ppid in parents
                and not is_ke_opt(ppid)):
            return int(pid)
    return None


def descendants(root):
    """Pids of `root` and every process below it."""
    children = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        children.setdefault(ppid, []).append(int(pid))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo.extend(children.get(pid, []))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=3)
    parser.add_argument("--rank", type=int, default=2)
    parser.add_argument("--after", type=int, default=20)
    parser.add_argument("--records", required=True)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    run = subprocess.Popen(["mpirun", "-n", str(args.ranks), "--oversubscribe"]
                           + command + ["--records", args.records],
                           stdout=subprocess.DEVNULL)
    deadline = time.time() + args.timeout
    trials = 0
    while time.time() < deadline and run.poll() is None:
        if os.path.exists(args.records):
            with open(args.records) as f:
                trials = sum('"role":"trial"' in line for line in f)
            if trials >= args.after:
                break
        time.sleep(0.05)
    if run.poll() is not None:
        sys.exit(f"the run ended (status {run.returncode}) before {args.after} trials")
    if trials < args.after:
        run.kill()
        sys.exit(f"only {trials} trials in {args.timeout} s")
    # The ranks are mpirun's children, or its daemon's.
    parents = descendants(run.pid)
    pid = rank_pid(args.rank, parents)
    if pid is None:
        run.kill()
        sys.exit(f"rank {args.rank} not found")
    os.kill(pid, signal.SIGKILL)
    print(f"killed rank {args.rank} after at least {args.after} trials")
    try:
        status = run.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        run.kill()
        sys.exit("the run did not end after its rank was killed")
    print("the run ended with " +
          ("a non-zero status" if status != 0 else "status 0"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

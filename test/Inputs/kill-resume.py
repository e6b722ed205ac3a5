"""Kills `ke-opt tune` with SIGKILL in the middle of tuning, runs it again and
checks that nothing finished was lost and that the second run resumed: the
records committed before the kill are read back as earlier trials, they
count toward the budget, and no schedule is measured twice.

Usage: kill-resume.py KE_OPT INPUT.mlir DATABASE
"""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

ke_opt, source, db = sys.argv[1:4]
for suffix in ("", "-wal", "-shm"):
    if os.path.exists(db + suffix):
        os.remove(db + suffix)

TRIALS = 30
args = [ke_opt, "tune", source, "--trials", str(TRIALS), "--explore", "20",
        "--min-seconds", "0.001", "--seed", "3", "--db", db, "--no-progress"]


def fail(message):
    print("kill-resume: FAILED: " + message)
    sys.exit(1)


def trial_rows():
    """(sketch, knobs) of every committed trial record."""
    if not os.path.exists(db):
        return []
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
        rows = con.execute(
            "SELECT sketch, knobs FROM records WHERE role = 'trial'").fetchall()
        con.close()
        return rows
    except sqlite3.Error:
        return []  # not created yet


tuner = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
deadline = time.time() + 300
while len(trial_rows()) < 5:
    if tuner.poll() is not None:
        fail("tune finished before it could be killed")
    if time.time() > deadline:
        tuner.kill()
        fail("no 5 trial records within 300 s")
    time.sleep(0.02)
tuner.send_signal(signal.SIGKILL)
tuner.wait()
before = trial_rows()
print(f"kill-resume: killed with {len(before)} trial records committed")

result = subprocess.run(args, capture_output=True, text=True)
if result.returncode != 0:
    fail("the second run failed:\n" + result.stderr)
summary = json.loads(result.stdout)
matmul = [w for w in summary["workloads"] if w["op"] == "linalg.matmul"]
if len(matmul) != 1:
    fail("no matmul in the summary")
w = matmul[0]
after = trial_rows()
print(f"kill-resume: resumed with previous={w['previous']} "
      f"trials={w['trials']} stopped={w['stopped']}; {len(after)} records")
if w["previous"] != len(before):
    fail(f"{len(before)} records were committed, {w['previous']} read back")
if len(after) != len(before) + w["trials"]:
    fail("the second run's records do not add up")
if w["stopped"] == "budget" and len(after) != TRIALS:
    fail(f"the budget is {TRIALS} trials, the database holds {len(after)}")
if len(set(after)) != len(after):
    fail("a schedule was measured twice")
print("kill-resume: ok")

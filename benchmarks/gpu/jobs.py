#!/usr/bin/env python3
"""Issue #17's throughput check on the GPU machine: parallel builds.

Tunes one problem (default: the suite's full matmul, 4096^3 f32) twice with
the same seed and budget, once with `--jobs 1` (one build at a time, still
ahead of the measurement) and once with `--jobs N` (default: the cores but
one), each with a database of its own; then re-times both best schedules
with `ke-opt bench`, alternating, ROUNDS times. Reports each run's tuning
wall time, trials per minute and best time, the wall-time ratio (the issue
asks <= 1/4 of the serial run's) and the best times side by side (the same
within noise). Runs where run.py runs: the static ke-opt carried in
build/package (unpacked on first use) or --ke-opt.

    python3 benchmarks/gpu/jobs.py --trials 400 --out jobs.json
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, SUITE, find_ke_opt, log, use_carried_openmp  # noqa: E402


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default=os.path.join(SUITE, "full", "matmul_square.mlir"))
    parser.add_argument("--target", default="cuda:sm_90")
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--explore", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ke-opt")
    parser.add_argument("--workdir", default=os.path.join(ROOT, "build", "gpu-jobs"))
    parser.add_argument("--out", help="write the results as JSON here too")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    ke_opt = find_ke_opt(args.ke_opt, args.workdir)
    use_carried_openmp()

    runs = {}
    for jobs in (1, args.jobs):
        db = os.path.join(args.workdir, f"jobs{jobs}.db")
        for path in (db, db + "-wal", db + "-shm"):
            if os.path.exists(path):
                os.remove(path)
        log(f"tuning {os.path.basename(args.problem)} with --jobs {jobs}")
        start = time.time()
        summary = run([ke_opt, "tune", args.problem, "--target", args.target,
                       "--trials", str(args.trials), "--explore", str(args.explore),
                       "--seed", str(args.seed), "--jobs", str(jobs), "--db", db,
                       "--no-progress"])
        runs[jobs] = {"db": db, "wall_seconds": time.time() - start,
                      "trials": summary["trials"],
                      "trials_per_minute": summary["trials_per_minute"],
                      "search_seconds": summary["search_seconds"],
                      "tuning_best": sum(w["best_seconds"] * w["count"]
                                         for w in summary["workloads"]
                                         if w.get("best_seconds")),
                      "bench": []}
    for _ in range(args.rounds):
        for jobs, r in runs.items():
            bench = run([ke_opt, "bench", args.problem, "--target", args.target,
                         "--db", r["db"]])
            r["bench"].append(sum(w["tuned"]["seconds"] for w in bench["workloads"]
                                  if "tuned" in w and w["tuned"]["status"] == "none"))
    for r in runs.values():
        r["best_seconds"] = statistics.median(r["bench"])
    serial, parallel = runs[1], runs[args.jobs]
    result = {"problem": args.problem, "target": args.target, "trials": args.trials,
              "jobs": args.jobs, "runs": {str(k): v for k, v in runs.items()},
              "search_time_ratio": parallel["search_seconds"] / serial["search_seconds"],
              "best_ratio": parallel["best_seconds"] / serial["best_seconds"]}
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()

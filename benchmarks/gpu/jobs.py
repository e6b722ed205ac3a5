#!/usr/bin/env python3
"""Issue #17's throughput check on the GPU machine: parallel builds and the
measuring server.

Tunes one problem (default: the suite's full matmul, 4096^3 f32) with the
same seed and budget in each configuration of --configs, each with a
database of its own:
  serial    `--jobs 1 --measuring-server=false`: one build at a time and a
            new measuring child per candidate (how ke tuned before both);
  jobs      `--jobs N` (default: the cores but one), a child per candidate;
  server    `--jobs N` and the measuring server (today's default);
then re-times every best schedule with `ke-opt bench`, alternating, ROUNDS
times. Reports each run's tuning wall time, trials per minute and best time,
the search-time ratios against the first configuration (the issue asks <=
1/4 of the serial run's) and the best times side by side (the same within
noise). Runs where run.py runs: the static ke-opt carried in
build/package (unpacked on first use) or --ke-opt.

    python3 benchmarks/gpu/jobs.py --trials 400 --out jobs.json
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import SUITE, log, parse_tuning_args, run_json as run  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default=os.path.join(SUITE, "full", "matmul_square.mlir"))
    parser.add_argument("--target", default="cuda:sm_90")
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--explore", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--configs", default="serial,server",
                        help="comma-separated: serial, jobs, server")
    args, ke_opt = parse_tuning_args(parser, "gpu-jobs")

    flags = {"serial": ["--jobs", "1", "--measuring-server=false"],
             "jobs": ["--jobs", str(args.jobs), "--measuring-server=false"],
             "server": ["--jobs", str(args.jobs)]}
    runs = {}
    for config in args.configs.split(","):
        db = os.path.join(args.workdir, f"{config}.db")
        for path in (db, db + "-wal", db + "-shm"):
            if os.path.exists(path):
                os.remove(path)
        log(f"tuning {os.path.basename(args.problem)}: {config} ({' '.join(flags[config])})")
        start = time.time()
        summary = run([ke_opt, "tune", args.problem, "--target", args.target,
                       "--trials", str(args.trials), "--explore", str(args.explore),
                       "--seed", str(args.seed), *flags[config], "--db", db,
                       "--no-progress"])
        runs[config] = {"db": db, "flags": flags[config], "wall_seconds": time.time() - start,
                      "trials": summary["trials"],
                      "trials_per_minute": summary["trials_per_minute"],
                      "search_seconds": summary["search_seconds"],
                      "valid": sum(w.get("valid", 0) for w in summary["workloads"]),
                      "errors": {k: sum(w.get("errors", {}).get(k, 0)
                                        for w in summary["workloads"])
                                 for k in ("invalid-schedule", "compile-error",
                                           "launch-error", "timeout", "crash",
                                           "wrong-result")},
                      "tuning_best": sum(w["best_seconds"] * w["count"]
                                         for w in summary["workloads"]
                                         if w.get("best_seconds")),
                      "bench": []}
        log(f"  {json.dumps(runs[config])}")
        if args.out:
            with open(args.out, "w") as f:
                json.dump({"partial": True, "runs": runs}, f, indent=2)
    for _ in range(args.rounds):
        for jobs, r in runs.items():
            bench = run([ke_opt, "bench", args.problem, "--target", args.target,
                         "--db", r["db"]])
            r["bench"].append(sum(w["tuned"]["seconds"] for w in bench["workloads"]
                                  if "tuned" in w and w["tuned"]["status"] == "none"))
    for r in runs.values():
        r["best_seconds"] = statistics.median(r["bench"])
    first = next(iter(runs.values()))
    for r in runs.values():
        r["search_time_ratio"] = r["search_seconds"] / first["search_seconds"]
        r["best_ratio"] = r["best_seconds"] / first["best_seconds"]
    result = {"problem": args.problem, "target": args.target, "trials": args.trials,
              "jobs": args.jobs, "runs": runs}
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""ke against OpenBLAS and oneDNN on this CPU, as ratios measured in one run.

For each problem: `ke-opt tune` (--trials N, --explore K: evolutionary
exploration then droplet search; --search random for the issue-3 baseline)
on the suite's full shape; then, ROUNDS times in alternation, `ke-opt bench`
of the best recorded schedule (rebuilt, checked and timed again) and each
vendor baseline on the same shape with as many threads as ke may use (the
host's cores). The
medians over the rounds give the ratio: alternating keeps the slow drifts of
a shared machine from favouring either side. Prints a Markdown table; with
--results, replaces the table between the markers in docs/results.md.

    python3 benchmarks/cpu/compare.py --trials 400 --results docs/results.md
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from results_md import replace_section  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("KE_BUILD_DIR", os.path.join(ROOT, "build"))
KE_OPT = os.environ.get("KE_OPT", os.path.join(BUILD, "tools", "ke-opt", "ke-opt"))
BASELINES = os.path.join(BUILD, "benchmarks", "ke-baselines")
SUITE = os.path.join(ROOT, "benchmarks", "suite", "full")

PROBLEMS = [
    # (suite file, anchor op, baseline commands)
    ("matmul_square", "linalg.matmul", [["sgemm", "1024", "1024", "1024"],
                                        ["onednn-sgemm", "1024", "1024", "1024"]]),
    ("conv2d_nhwc", "linalg.conv_2d_nhwc_hwcf",
     [["conv2d-nhwc", "8", "58", "58", "64", "3", "3", "64"]]),
]


def run(cmd, env=None):
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{result.stderr[-4000:]}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--explore", type=int, default=300)
    parser.add_argument("--search", default="droplet", choices=["droplet", "random"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--results", help="docs/results.md to update")
    args = parser.parse_args()

    target = json.loads(run([KE_OPT, "target", "cpu"]))
    threads = target["cores"]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    rows = []
    for name, op, baselines in PROBLEMS:
        print(f"[compare] tuning {name} ({args.trials} trials, {args.search})...",
              file=sys.stderr)
        records = os.path.join(BUILD, f"compare-{name}.jsonl")
        db = os.path.join(BUILD, f"compare-{name}.db")
        for path in (records, db, db + "-wal", db + "-shm"):
            if os.path.exists(path):
                os.remove(path)
        summary = json.loads(run([KE_OPT, "tune", os.path.join(SUITE, name + ".mlir"),
                                  "--trials", str(args.trials), "--explore", str(args.explore),
                                  "--search", args.search, "--seed", str(args.seed),
                                  "--records", records, "--db", db, "--no-progress"]))
        anchor = next(w for w in summary["workloads"] if w["op"] == op)
        ke_times, untuned_times = [], []
        base_times = {tuple(b): [] for b in baselines}
        base_names = {}
        for _ in range(args.rounds):
            bench = json.loads(run([KE_OPT, "bench", os.path.join(SUITE, name + ".mlir"),
                                    "--records", records, "--min-seconds", "0.5"]))
            row = next(w for w in bench["workloads"] if w["op"] == op)
            if row["tuned"]["status"] != "none" or row["untuned"]["status"] != "none":
                sys.exit(f"bench of {name} failed: {json.dumps(row)}")
            ke_times.append(row["tuned"]["seconds"])
            untuned_times.append(row["untuned"]["seconds"])
            for b in baselines:
                base = json.loads(run([BASELINES] + b + [str(threads)], env=env))
                base_times[tuple(b)].append(base["seconds"])
                base_names[tuple(b)] = base["baseline"]
        for b in baselines:
            rows.append({
                "problem": name, "flops": anchor["flops"],
                "ke_seconds": statistics.median(ke_times),
                "ke_spread": (min(ke_times), max(ke_times)),
                "ke_untuned_seconds": statistics.median(untuned_times),
                "valid": anchor["valid"], "trials": anchor["trials"],
                "baseline": base_names[tuple(b)],
                "baseline_seconds": statistics.median(base_times[tuple(b)]),
                "baseline_spread": (min(base_times[tuple(b)]), max(base_times[tuple(b)])),
            })

    date = datetime.date.today().isoformat()
    lines = [
        f"Machine: {target['chip']} ({platform.machine()}), {threads} cores used by "
        f"both sides, {target['vector_bits']}-bit vectors; {date}.",
        f"Command: `python3 benchmarks/cpu/compare.py --trials {args.trials} "
        f"--explore {args.explore} --search {args.search} "
        f"--seed {args.seed} --rounds {args.rounds}`",
        f"Medians of {args.rounds} alternating rounds; the range over the rounds in brackets.",
        "",
        f"| problem | GFLOP | ke best of N ({args.search}) | ke untuned | baseline | baseline | ke / baseline |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        gf = r["flops"] / 1e9
        ke = gf / r["ke_seconds"]
        ke_lo, ke_hi = gf / r["ke_spread"][1], gf / r["ke_spread"][0]
        untuned = gf / r["ke_untuned_seconds"]
        b = gf / r["baseline_seconds"]
        b_lo, b_hi = gf / r["baseline_spread"][1], gf / r["baseline_spread"][0]
        lines.append(
            f"| {r['problem']} | {gf:.2f} | {ke:.1f} GFLOP/s [{ke_lo:.0f}-{ke_hi:.0f}] "
            f"(N={r['trials']}, {r['valid']} valid) | {untuned:.1f} GFLOP/s | {r['baseline']} "
            f"| {b:.1f} GFLOP/s [{b_lo:.0f}-{b_hi:.0f}] | {ke / b:.2f} |")
    table = "\n".join(lines)
    print(table)
    if args.results:
        replace_section(args.results, "cpu-baselines", table,
                        "CPU: ke against OpenBLAS and oneDNN")


if __name__ == "__main__":
    main()

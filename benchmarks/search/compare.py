#!/usr/bin/env python3
"""Search efficiency on this CPU: explore + droplet against evolution alone and
against random search, as ratios of best times re-measured in one run.

For each problem, three tuning runs of `ke-opt tune` with the same seed:
  droplet:   --trials 400 --explore 300   (explore 300, droplet 100; default)
  evolution: --trials 1000 --explore 1000 (evolutionary exploration only)
  random:    --search random --trials 400
Each run's best schedule is then re-measured by `ke-opt bench`, ROUNDS times
in alternation across the three (the medians give the ratios; times taken in
separate tuning runs on a shared VM differ by tens of percent, so only times
measured side by side are compared). The tuning wall time of each run is
reported too. Prints a Markdown table; with --results, replaces the table
between the markers in docs/results.md.

    python3 benchmarks/search/compare.py --rounds 5 --results docs/results.md
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from results_md import replace_section  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("KE_BUILD_DIR", os.path.join(ROOT, "build"))
KE_OPT = os.environ.get("KE_OPT", os.path.join(BUILD, "tools", "ke-opt", "ke-opt"))
SUITE = os.path.join(ROOT, "benchmarks", "suite", "full")
WORK = os.path.join(BUILD, "search-compare")

MATMUL_512 = """func.func @matmul(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<512x512xf32>, tensor<512x512xf32>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}
"""

# (name, file, anchor op)
PROBLEMS = [
    ("matmul 512^3", None, "linalg.matmul"),
    ("conv2d NHWC 8x58x58x64, 3x3x64x64", os.path.join(SUITE, "conv2d_nhwc.mlir"),
     "linalg.conv_2d_nhwc_hwcf"),
    ("softmax 4096x4096", os.path.join(SUITE, "softmax.mlir"), "linalg.softmax"),
]

STRATEGIES = [
    ("droplet", ["--trials", "400", "--explore", "300"]),
    ("evolution", ["--trials", "1000", "--explore", "1000"]),
    ("random", ["--search", "random", "--trials", "400"]),
]
LABELS = {"droplet": "explore 300 + droplet 100",
          "evolution": "evolution only, 1000",
          "random": "random, 400"}


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{result.stderr[-4000:]}")
    return result.stdout


def best_record(records, key):
    """The record ke compiles for workload `key`: the fastest of the newest
    final record (the finalists re-timed side by side) and the valid
    trial/untuned records after it."""
    best = None
    for line in open(records):
        r = json.loads(line)
        if r.get("workload") != key or r.get("error") != "none":
            continue
        if r["role"] not in ("trial", "untuned", "final") or r.get("early_stop"):
            continue
        if best is None or r["role"] == "final" or r["median_seconds"] < best["median_seconds"]:
            best = r
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", help="run only problems whose name contains this")
    parser.add_argument("--strategies", default="droplet,evolution,random",
                        help="comma-separated, of: " + ", ".join(n for n, _ in STRATEGIES))
    parser.add_argument("--results", help="docs/results.md to update")
    parser.add_argument("--section", default="search-efficiency",
                        help="the marker of the table in --results")
    args = parser.parse_args()
    chosen = args.strategies.split(",")
    strategies = [(n, o) for n, o in STRATEGIES if n in chosen]
    if "droplet" not in chosen or len(strategies) != len(chosen):
        sys.exit("--strategies: droplet (the baseline) and known names only")
    os.makedirs(WORK, exist_ok=True)
    matmul = os.path.join(WORK, "matmul_512.mlir")
    with open(matmul, "w") as f:
        f.write(MATMUL_512)

    rows = []
    for name, path, op in PROBLEMS:
        if args.only and args.only not in name:
            continue
        path = path or matmul
        tuned = {}
        for strategy, options in strategies:
            records = os.path.join(WORK, f"{op}-{strategy}.jsonl")
            if os.path.exists(records):
                os.remove(records)
            print(f"[search] {name}: tuning with {strategy}...", file=sys.stderr)
            start = time.time()
            summary = json.loads(run([KE_OPT, "tune", path, "--seed", str(args.seed),
                                      "--no-db", "--no-progress", "--records", records]
                                     + options))
            wall = time.time() - start
            w = next(w for w in summary["workloads"] if w["op"] == op)
            best = best_record(records, w["key"])
            single = os.path.join(WORK, f"{op}-{strategy}-best.jsonl")
            with open(single, "w") as f:
                f.write(json.dumps(best) + "\n")
            tuned[strategy] = {"records": single, "wall": wall, "trials": w["trials"],
                               "tuning_best": w["best_seconds"], "times": [],
                               "flops": w.get("flops")}
        for _ in range(args.rounds):
            for strategy, _ in strategies:
                bench = json.loads(run([KE_OPT, "bench", path, "--records",
                                        tuned[strategy]["records"], "--min-seconds", "0.5"]))
                row = next(w for w in bench["workloads"] if w["op"] == op)
                if row["tuned"]["status"] != "none":
                    sys.exit(f"bench of {name} ({strategy}) failed: {json.dumps(row)}")
                tuned[strategy]["times"].append(row["tuned"]["seconds"])
        for strategy in tuned:
            tuned[strategy]["median"] = statistics.median(tuned[strategy]["times"])
        rows.append((name, tuned))

    cpu = json.loads(run([KE_OPT, "target", "cpu"]))
    lines = [f"Measured {datetime.date.today()} on `{cpu['chip']}` "
             f"({cpu['cores']} cores, {platform.machine()}), seed {args.seed}, "
             f"medians of {args.rounds} alternating re-measurements of each "
             "strategy's best schedule:",
             "",
             "    python3 benchmarks/search/compare.py --rounds "
             f"{args.rounds} --seed {args.seed} --strategies {args.strategies} "
             f"--results docs/results.md --section {args.section}",
             "",
             "| problem | strategy | trials | tuning wall (s) | best (ms) | "
             "vs explore 300 + droplet 100 |",
             "|---|---|---|---|---|---|"]
    for name, tuned in rows:
        base = tuned["droplet"]["median"]
        for strategy, _ in strategies:
            t = tuned[strategy]
            label = LABELS[strategy]
            lines.append(f"| {name} | {label} | {t['trials']} | {t['wall']:.0f} | "
                         f"{t['median'] * 1e3:.3f} | {t['median'] / base:.3f} |")
    lines.append("")
    lines.append("The last column is best time / best time of explore + droplet: "
                 "above 1 means explore + droplet found the faster schedule.")
    table = "\n".join(lines)
    print(table)
    if args.results:
        replace_section(args.results, args.section, table,
                        "CPU: search efficiency (issue #4)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Issue #17, item 3: the seed's claim at its own scale, on this CPU.

Ansor's best after 10,000 samples is usually beaten by the best of its first
300 refined by droplet search. For each problem, two `ke-opt tune` runs with
the same seed:
  evolution: --trials 10000 --explore 10000 (Ansor's policy as ke implements
             it: evolutionary search guided by the cost model, no droplet)
  droplet:   --trials 400 --explore 300 (explore 300, then droplet search)
each with its own database and convergence log (--log: best time so far
after every trial, and the wall time). Both final bests are then re-timed
with `ke-opt bench`, alternating, --rounds times (only times measured side
by side are compared). Prints a Markdown table (best so far at trial
checkpoints and wall times, from the logs; the re-timed ratio) and, with
--plot, draws best time against trials and against wall time.

    python3 benchmarks/search/seed_claim.py --plot docs/seed-claim-cpu.png
    python3 benchmarks/search/seed_claim.py --from-json runs.json --plot p.png
"""
import argparse
import csv
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ke_cli import BUILD, ROOT, ke  # noqa: E402
PROBLEMS = [
    ("BERT QKV matmul (realistic/small)",
     os.path.join(ROOT, "benchmarks", "realistic", "small", "bert_qkv.mlir"), "linalg.matmul"),
    ("conv2d NHWC (suite/small)",
     os.path.join(ROOT, "benchmarks", "suite", "small", "conv2d_nhwc.mlir"),
     "linalg.conv_2d_nhwc_hwcf"),
]
CHECKPOINTS = [100, 300, 400, 1000, 3000, 10000]


def read_log(path, op):
    """[(trial of the op's workload, best so far, elapsed seconds)]."""
    curve = []
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["op"] == op and row["best_seconds"]:
                curve.append((len(curve) + 1, float(row["best_seconds"]),
                              float(row["elapsed_seconds"])))
    return curve


def best_at(curve, trials):
    reached = [b for t, b, _ in curve if t <= trials]
    return reached[-1] if reached else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min-seconds", type=float, default=0.02)
    parser.add_argument("--only", help="problems whose name contains this")
    parser.add_argument("--workdir", default=os.path.join(BUILD, "seed-claim"))
    parser.add_argument("--plot", help="write a PNG of the curves here")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--from-json",
                        help="tabulate and plot the results an earlier --out wrote "
                             "(no tuning, no re-timing: records go stale when the "
                             "lowering changes)")
    parser.add_argument("--reuse", action="store_true",
                        help="take runs whose database and log are in --workdir "
                             "as they are (re-time only)")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    strategies = [("evolution", ["--trials", str(args.trials), "--explore", str(args.trials)]),
                  ("droplet", ["--trials", "400", "--explore", "300"])]
    results = []
    if args.from_json:
        with open(args.from_json) as f:
            results = json.load(f)
    for name, path, op in PROBLEMS if not args.from_json else []:
        if args.only and args.only not in name:
            continue
        runs = {}
        for label, flags in strategies:
            stem = os.path.join(args.workdir, f"{os.path.basename(path)[:-5]}-{label}")
            if args.reuse and os.path.exists(stem + ".db") and os.path.exists(stem + ".csv"):
                curve = read_log(stem + ".csv", op)
                with open(stem + ".csv") as f:
                    key = next(row["workload"] for row in csv.DictReader(f) if row["op"] == op)
                runs[label] = {"db": stem + ".db", "curve": curve, "trials": len(curve),
                               "stopped": "reused", "key": key, "bench": []}
                continue
            for suffix in (".db", ".db-wal", ".db-shm", ".csv"):
                if os.path.exists(stem + suffix):
                    os.remove(stem + suffix)
            print(f"[seed-claim] {name}: {label}", file=sys.stderr, flush=True)
            summary = ke("tune", path, "--target", "cpu", *flags, "--seed", str(args.seed),
                         "--min-seconds", str(args.min_seconds), "--db", stem + ".db",
                         "--log", stem + ".csv", "--no-progress", "--transfer-samples", "0")
            workload = next(w for w in summary["workloads"] if w["op"] == op)
            runs[label] = {"db": stem + ".db", "curve": read_log(stem + ".csv", op),
                           "trials": workload["trials"], "stopped": workload["stopped"],
                           "key": workload["key"], "bench": []}
        for _ in range(args.rounds):
            for label, run in runs.items():
                bench = ke("bench", path, "--target", "cpu", "--db", run["db"])
                w = next(w for w in bench["workloads"] if w["key"] == run["key"])
                run["bench"].append(w["tuned"]["seconds"])
        for run in runs.values():
            run["retimed"] = statistics.median(run["bench"])
        results.append({"problem": name, "op": op, "runs": runs,
                        "droplet_over_evolution": runs["droplet"]["retimed"]
                        / runs["evolution"]["retimed"]})

    print("| problem | run | trials | best so far (us) at " +
          " / ".join(map(str, CHECKPOINTS)) + " trials | tuning wall s | re-timed best (us) |")
    print("|---|---|---|---|---|---|")
    for r in results:
        for label, run in r["runs"].items():
            at = " / ".join(f"{best_at(run['curve'], c) * 1e6:.2f}" if best_at(run["curve"], c)
                            and c <= run["curve"][-1][0] + 0 else "-" for c in CHECKPOINTS)
            print(f"| {r['problem']} | {label} | {run['trials']} ({run['stopped']}) | {at} | "
                  f"{run['curve'][-1][2]:.0f} | {run['retimed'] * 1e6:.2f} |")
        print(f"| | droplet / evolution (re-timed) | | | | "
              f"**{r['droplet_over_evolution']:.3f}** |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(len(results), 2, figsize=(11, 3.6 * len(results)),
                                 squeeze=False)
        for row, r in zip(axes, results):
            for label, run in r["runs"].items():
                t = [c[0] for c in run["curve"]]
                b = [c[1] * 1e6 for c in run["curve"]]
                s = [c[2] for c in run["curve"]]
                row[0].plot(t, b, label=label)
                row[1].plot(s, b, label=label)
            row[0].set_xscale("log")
            row[0].set_xlabel("trials")
            row[1].set_xscale("log")
            row[1].set_xlabel("tuning wall time (s)")
            for ax in row:
                ax.set_ylabel("best so far (us)")
                ax.set_title(r["problem"])
                ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=90)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Issue #16's CPU check: does any workload tune slower than its reference?

For every problem file given (default: the suite's and the realistic set's
small problems and examples/), `ke-opt tune` on this CPU (--trials,
--explore; no database, so every workload is searched afresh) and, per
workload, the tune summary's three times, all measured in the same run by
the same protocol (docs/measurement.md): the unscheduled reference, the
untuned default schedule, and the best schedule found. A workload whose
best is slower than its reference by more than --noise is a cliff; so,
reported apart, is an untuned default slower than the reference (what
`ke-opt compile` gives without a tuning database).

Prints a Markdown table (cliffs first) and a summary line; with --results,
writes the table between <!-- cpu-cliffs:begin/end --> in docs/results.md.
Exits 1 when a tuned workload is a cliff.

    python3 benchmarks/cpu/no_cliffs.py --trials 32 --results docs/results.md
"""
import argparse
import datetime
import glob
import json
import os
import platform
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from results_md import replace_section  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("KE_BUILD_DIR", os.path.join(ROOT, "build"))
KE_OPT = os.environ.get("KE_OPT", os.path.join(BUILD, "tools", "ke-opt", "ke-opt"))
DEFAULT_FILES = (sorted(glob.glob(os.path.join(ROOT, "benchmarks", "suite", "small", "*.mlir")))
                 + sorted(glob.glob(os.path.join(ROOT, "benchmarks", "realistic", "small", "*.mlir")))
                 + sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir"))))


def tune(path, args):
    cmd = [KE_OPT, "tune", path, "--trials", str(args.trials), "--explore",
           str(args.explore), "--seed", str(args.seed), "--no-db", "--no-progress"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    if result.returncode != 0:
        return None, result.stderr.strip().splitlines()[-1:] or ["exit %d" % result.returncode]
    return json.loads(result.stdout), None


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", default=DEFAULT_FILES)
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--explore", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise", type=float, default=0.10,
                        help="best slower than the reference by more than this "
                             "fraction is a cliff (timing noise of small kernels "
                             "on a shared machine is about +-10%%)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per file")
    parser.add_argument("--results", help="docs/results.md to update")
    args = parser.parse_args()

    rows, failures = [], []
    for i, path in enumerate(args.files, 1):
        name = os.path.relpath(path, ROOT)
        print(f"[no-cliffs] [{i}/{len(args.files)}] {name}", file=sys.stderr)
        try:
            summary, error = tune(path, args)
        except subprocess.TimeoutExpired:
            summary, error = None, [f"timed out after {args.timeout:.0f} s"]
        if summary is None:
            failures.append(f"{name}: {' '.join(error)}")
            continue
        for w in summary["workloads"]:
            if w.get("fused_into") or w.get("skipped"):
                continue
            ref, untuned, best = (w.get("reference_seconds"), w.get("untuned_seconds"),
                                  w.get("best_seconds"))
            if not ref or not best:
                failures.append(f"{name} {w.get('op')}: no reference or no valid schedule")
                continue
            rows.append({"file": name, "op": w["op"], "sketch": (w.get("best_schedule") or {}).get("sketch", "?"),
                         "ref": ref, "untuned": untuned, "best": best,
                         "tuned_cliff": best > ref * (1 + args.noise),
                         "untuned_cliff": bool(untuned) and untuned > ref * (1 + args.noise)})

    rows.sort(key=lambda r: (not r["tuned_cliff"], not r["untuned_cliff"], r["ref"] / r["best"]))
    tuned_cliffs = sum(r["tuned_cliff"] for r in rows)
    untuned_cliffs = sum(r["untuned_cliff"] for r in rows)
    lines = [
        f"{datetime.date.today()}, {platform.machine()} ({os.cpu_count()} cores), "
        f"`python3 benchmarks/cpu/no_cliffs.py --trials {args.trials} --explore {args.explore}` "
        f"({len(args.files)} files). Times in µs, each workload's three measured in one "
        f"`ke-opt tune` run; a cliff is more than {args.noise:.0%} slower than the reference.",
        "",
        f"Tuned slower than the reference: **{tuned_cliffs} of {len(rows)}** workloads; "
        f"untuned default slower: {untuned_cliffs} of {len(rows)}; files that failed: {len(failures)}.",
        "",
        "| file | op | best sketch | reference | untuned | best | ref / best | ref / untuned |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        mark = " **(cliff)**" if r["tuned_cliff"] else ""
        untuned = f"{r['untuned'] * 1e6:.1f}" if r["untuned"] else "–"
        ratio_untuned = f"{r['ref'] / r['untuned']:.2f}" if r["untuned"] else "–"
        lines.append(f"| {r['file']} | {r['op']} | {r['sketch']} | {r['ref'] * 1e6:.1f} | "
                     f"{untuned} | {r['best'] * 1e6:.1f} | {r['ref'] / r['best']:.2f}{mark} | "
                     f"{ratio_untuned} |")
    for f in failures:
        lines.append(f"| {f} | | | | | | | |")
    table = "\n".join(lines) + "\n"
    print(table)
    if args.results:
        replace_section(args.results, "cpu-cliffs", table,
                        "CPU: tuned against the unscheduled reference, every workload (issue #16)")
    return 1 if tuned_cliffs or failures else 0


if __name__ == "__main__":
    sys.exit(main())

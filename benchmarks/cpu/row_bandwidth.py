#!/usr/bin/env python3
"""Issue #16's CPU bandwidth check: softmax and norm rows against copy.

For each row problem of the suite at its full shape (4096 x 4096 f32: the
data is 4x this machine's last-level cache), `ke-opt tune` on this CPU
(--trials, --explore; a database of its own), then ROUNDS times in
alternation: `ke-opt bench` of the best recorded schedule of every
workload of the problem (rebuilt, checked against the reference and timed
by the protocol, input sets rotated), and `ke-baselines copy` of the
problem's input bytes on all cores (memcpy split across threads, three
buffer pairs rotated the same way). The problem's time is the sum of its
kernels' (each workload's tuned time times its count); its bandwidth is the
least traffic any implementation has (every argument read once, every
result written once) over that time, held against the copy's bytes read and
written per second measured in the same round. Medians over the rounds.

Prints a Markdown table; with --results, writes it between
<!-- cpu-row-bandwidth:begin/end --> in docs/results.md. Exits 1 when a
problem is below --target of the copy bandwidth (default 0.7, the issue's).

    python3 benchmarks/cpu/row_bandwidth.py --trials 32 --results docs/results.md
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from results_md import replace_section  # noqa: E402
# The paths and the command runner of the vendor comparison (same directory).
from compare import BASELINES, BUILD, KE_OPT, SUITE, run  # noqa: E402

PROBLEMS = ["softmax", "log_softmax", "layernorm", "rmsnorm"]
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4}


def tensor_bytes(text):
    """Bytes of every static tensor type in `text`, in order."""
    sizes = []
    for dims, element in re.findall(r"tensor<((?:\d+x)*)(\w+)>", text):
        count = 1
        for d in dims.split("x")[:-1]:
            count *= int(d)
        sizes.append(count * ELEMENT_BYTES[element])
    return sizes


def signature_bytes(path):
    """The least traffic (every argument and result once) and the first
    argument's bytes (the rows: what the copy baseline copies)."""
    text = open(path).read()
    header = re.search(r"func\.func @\w+\((.*?)\)\s*->\s*(.*?)\s*\{", text, re.S)
    arguments, results = tensor_bytes(header.group(1)), tensor_bytes(header.group(2))
    return sum(arguments) + sum(results), arguments[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--explore", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", type=float, default=0.7)
    parser.add_argument("--problems", nargs="*", default=PROBLEMS)
    parser.add_argument("--results", help="docs/results.md to update")
    args = parser.parse_args()
    if not os.path.exists(BASELINES):
        sys.exit(f"{BASELINES} is missing (built with OpenBLAS and oneDNN: scripts/setup.sh)")

    target = json.loads(run([KE_OPT, "target", "cpu"]))
    threads = target["cores"]
    rows = []
    for name in args.problems:
        path = os.path.join(SUITE, name + ".mlir")
        least_bytes, input_bytes = signature_bytes(path)
        print(f"[row-bandwidth] tuning {name} ({args.trials} trials)...", file=sys.stderr)
        records = os.path.join(BUILD, f"row-bandwidth-{name}.jsonl")
        db = os.path.join(BUILD, f"row-bandwidth-{name}.db")
        for p in (records, db, db + "-wal", db + "-shm"):
            if os.path.exists(p):
                os.remove(p)
        summary = json.loads(run([KE_OPT, "tune", path, "--trials", str(args.trials),
                                  "--explore", str(args.explore), "--seed", str(args.seed),
                                  "--records", records, "--db", db, "--no-progress"]))
        counts = {w["key"]: w["count"] for w in summary["workloads"]}
        tuned = [w for w in summary["workloads"] if "best_seconds" in w]
        ke_times, ref_times, copy_times = [], [], []
        for _ in range(args.rounds):
            bench = json.loads(run([KE_OPT, "bench", path, "--records", records,
                                    "--min-seconds", "0.5"]))
            total = reference = 0.0
            for w in bench["workloads"]:
                if "fused_into" in w:
                    continue
                if w["tuned"]["status"] != "none":
                    sys.exit(f"bench of {name} failed: {json.dumps(w)}")
                total += w["tuned"]["seconds"] * counts[w["key"]]
                reference += w["reference"]["seconds"] * counts[w["key"]]
            ke_times.append(total)
            ref_times.append(reference)
            copy = json.loads(run([BASELINES, "copy", str(input_bytes), str(threads)]))
            copy_times.append(copy["seconds"])
        ke = statistics.median(ke_times)
        copy = statistics.median(copy_times)
        rows.append({
            "problem": name, "bytes": least_bytes, "kernels": len(tuned),
            "sketches": sorted({w["best_schedule"]["sketch"] for w in tuned}),
            "ke": ke, "ke_range": (min(ke_times), max(ke_times)),
            "reference": statistics.median(ref_times),
            "copy": copy, "copy_bytes": 2 * input_bytes,
        })

    date = datetime.date.today().isoformat()
    lines = [
        f"{date}, {target['chip']} ({platform.machine()}, {threads} cores), "
        f"`python3 benchmarks/cpu/row_bandwidth.py --trials {args.trials} --explore "
        f"{args.explore} --rounds {args.rounds}`. Medians of {args.rounds} alternating rounds "
        "(the range of ke's in brackets); bandwidth = the least traffic (arguments read "
        "once, results written once) / time; copy = memcpy of the input on all cores "
        "(bytes read + written / time), measured in the same rounds.",
        "",
        "| problem | MiB moved | kernels (best sketches) | ke ms | reference ms | ke GB/s | copy GB/s | ke / copy |",
        "|---|---|---|---|---|---|---|---|",
    ]
    below = 0
    for r in rows:
        gbps = r["bytes"] / r["ke"] / 1e9
        copy_gbps = r["copy_bytes"] / r["copy"] / 1e9
        ratio = gbps / copy_gbps
        below += ratio < args.target
        lines.append(
            f"| {r['problem']} | {r['bytes'] / 2**20:.0f} | {r['kernels']} "
            f"({', '.join(r['sketches'])}) | {r['ke'] * 1e3:.2f} "
            f"[{r['ke_range'][0] * 1e3:.2f}-{r['ke_range'][1] * 1e3:.2f}] | "
            f"{r['reference'] * 1e3:.1f} | {gbps:.1f} | {copy_gbps:.1f} | "
            f"{ratio:.2f}{' **(below %.0f%%)**' % (args.target * 100) if ratio < args.target else ''} |")
    lines += ["", f"Below {args.target:.0%} of copy: **{below} of {len(rows)}**."]
    table = "\n".join(lines)
    print(table)
    if args.results:
        replace_section(args.results, "cpu-row-bandwidth", table,
                        "CPU: softmax and norm rows against copy bandwidth (issue #16)")
    sys.exit(1 if below else 0)


if __name__ == "__main__":
    main()

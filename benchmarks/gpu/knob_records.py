#!/usr/bin/env python3
"""Records that pin one sketch's knobs, for an A/B of a knob with `ke-opt bench`.

`ke-opt bench FILE --records R.jsonl` times each workload's untuned default
and the best schedule recorded for it in R, both checked against the
reference, and prints `tuned_speedup_over_untuned`. This script writes R
without tuning: for every workload of the given MLIR files that SKETCH applies
to, the sketch's default knob values (as `ke-opt sketches` prints them) with
the --set overrides. So a question such as "is gpu.ffma's mma.sync variant
correct and faster than the default here?" is one bench call:

    python3 benchmarks/gpu/knob_records.py FILE... --target cuda:sm_90a+3xtf32 \\
        --sketch gpu.ffma --set mma=1 --out /tmp/mma.jsonl
    ke-opt bench FILE... --target cuda:sm_90a+3xtf32 --records /tmp/mma.jsonl \\
        --reference device

The records carry no measurement (median_seconds 0 only makes them the
best of the file); bench measures them. Runs anywhere ke-opt runs: the knob
defaults depend on the target, not on a device.
"""
import argparse
import json
import re
import subprocess
import sys

WORKLOAD = re.compile(r"^// -----// workload ([0-9a-f]+) ")
DEFAULT = re.compile(r"^\s*// sketch (\S+): (.*)$")


def default_knobs(ke_opt, path, target, sketch, extra):
    """{workload key: default knob values} for the workloads SKETCH applies to."""
    out = subprocess.run([ke_opt, "sketches", path, f"--target={target}",
                          f"--sketch={sketch}"] + extra,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"knob-records: ke-opt sketches {path} failed:\n{out.stderr}")
    knobs, key = {}, None
    for line in (out.stdout + out.stderr).splitlines():
        if m := WORKLOAD.match(line):
            key = m.group(1)
        elif (m := DEFAULT.match(line)) and key and m.group(1) == sketch:
            knobs[key] = {k: int(v) for k, v in
                          (item.split("=") for item in m.group(2).split())}
            key = None  # the first script of a workload holds its defaults
    return knobs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--target", required=True)
    parser.add_argument("--sketch", required=True)
    parser.add_argument("--set", action="append", default=[], metavar="KNOB=VALUE",
                        help="a knob value to use instead of the default (repeatable)")
    parser.add_argument("--ke-opt", default="build/tools/ke-opt/ke-opt")
    parser.add_argument("--out", required=True)
    parser.add_argument("--sketches-arg", action="append", default=[],
                        help="an extra option for ke-opt sketches (repeatable)")
    args = parser.parse_args()
    overrides = {}
    for item in args.set:
        name, _, value = item.partition("=")
        if not value.lstrip("-").isdigit():
            sys.exit(f"knob-records: --set {item}: expected KNOB=INTEGER")
        overrides[name] = int(value)
    count = 0
    with open(args.out, "w") as out:
        for path in args.files:
            for key, knobs in default_knobs(args.ke_opt, path, args.target,
                                            args.sketch, args.sketches_arg).items():
                unknown = set(overrides) - set(knobs)
                if unknown:
                    print(f"knob-records: {path} workload {key}: {args.sketch} has no "
                          f"knob {', '.join(sorted(unknown))}; skipped", file=sys.stderr)
                    continue
                knobs.update(overrides)
                out.write(json.dumps({"workload": key, "error": "none",
                                      "median_seconds": 0.0,
                                      "schedule": {"sketch": args.sketch,
                                                   "knobs": knobs}}) + "\n")
                count += 1
                print(f"knob-records: {path} {key} {args.sketch} "
                      + " ".join(f"{k}={v}" for k, v in knobs.items()), file=sys.stderr)
    print(f"knob-records: {count} records in {args.out}", file=sys.stderr)
    return 0 if count else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Tunes suite problems with ke-opt and checks every candidate's outcome.

Every workload must be measurable (not skipped), its reference and untuned
default must be valid, no candidate may be a wrong result or a crash (a crash
of generated code would mean a miscompile the check did not see), and at
least --min-valid of all candidates must be valid. Prints a summary line per
problem and a total; exits 1 on any violation.

    check-suite.py KE_OPT FILE.mlir... [--trials N] [--min-valid 0.9] [--json OUT]
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "benchmarks"))
from results_md import replace_section  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ke_opt")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--min-valid", type=float, default=0.9)
    parser.add_argument("--json", help="write per-problem counts here")
    parser.add_argument("--results", help="docs/results.md: replace the "
                        "suite-validity block with this run's table")
    args = parser.parse_args()

    problems = []
    failures = []
    total = valid = 0
    for path in args.files:
        name = path.rsplit("/", 1)[-1]
        result = subprocess.run(
            [args.ke_opt, "tune", path, "--trials", str(args.trials), "--seed",
             str(args.seed), "--min-seconds", "0.002", "--no-progress", "--no-db",
             "--search", "random"],
            capture_output=True, text=True)
        if result.returncode != 0:
            failures.append(f"{name}: ke-opt tune exited {result.returncode}: "
                            f"{result.stderr[-2000:]}")
            continue
        summary = json.loads(result.stdout)
        p_total = p_valid = 0
        errors = {}
        for w in summary["workloads"]:
            label = f"{name} {w['op']} {w['key'][:8]}"
            if "fused_into" in w:
                # Measured inside the kernel of the workload it is fused into.
                if not any(o["key"] == w["fused_into"] and "skipped" not in o
                           for o in summary["workloads"]):
                    failures.append(f"{label}: fused into {w['fused_into']}, "
                                    "which was not tuned")
                continue
            if "skipped" in w:
                failures.append(f"{label}: skipped: {w['skipped']}")
                continue
            if w["reference_seconds"] is None:
                failures.append(f"{label}: the reference failed")
            if w["untuned_seconds"] is None:
                failures.append(f"{label}: the untuned default failed")
            for kind in ("wrong-result", "crash"):
                if w["errors"][kind]:
                    failures.append(f"{label}: {w['errors'][kind]} {kind}")
            for kind, n in w["errors"].items():
                errors[kind] = errors.get(kind, 0) + n
            p_total += w["trials"]
            p_valid += w["valid"]
        total += p_total
        valid += p_valid
        shown = ", ".join(f"{k} {v}" for k, v in errors.items() if v) or "no errors"
        print(f"{name:32} {p_valid:5}/{p_total:<5} valid  {shown}")
        problems.append({"problem": name, "valid": p_valid, "trials": p_total,
                         "errors": errors})
    fraction = valid / total if total else 0.0
    print(f"total: {valid}/{total} valid ({100 * fraction:.1f}%)")
    if total and fraction < args.min_valid:
        failures.append(f"only {100 * fraction:.1f}% valid, below {100 * args.min_valid:.0f}%")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"trials_per_workload": args.trials, "seed": args.seed,
                       "valid": valid, "total": total, "problems": problems}, f, indent=1)
    for failure in failures:
        print("FAIL:", failure)
    if args.results:
        write_results(args, problems, valid, total, failures)
    return 1 if failures else 0


def write_results(args, problems, valid, total, failures):
    import datetime
    import platform
    import re
    errors = {}
    for p in problems:
        for kind, n in p["errors"].items():
            errors[kind] = errors.get(kind, 0) + n
    target = json.loads(subprocess.run([args.ke_opt, "target", "cpu"],
                                       capture_output=True, text=True).stdout)
    lines = [
        f"Machine: {target['chip']} ({platform.machine()}), {target['cores']} cores, "
        f"{datetime.date.today().isoformat()}.",
        f"Command: `python3 test/suite/check-suite.py build/tools/ke-opt/ke-opt "
        f"benchmarks/suite/small/*.mlir --trials {args.trials} --seed {args.seed}`",
        "",
        f"{len(problems)} problems, {valid}/{total} candidates valid "
        f"({100 * valid / max(total, 1):.1f}%); errors: "
        + (", ".join(f"{k} {v}" for k, v in errors.items() if v) or "none")
        + (f"; {len(failures)} check failures" if failures else "; every check passed")
        + ".",
        "",
        "| problem | valid / candidates |",
        "|---|---|",
    ]
    for p in problems:
        lines.append(f"| {p['problem']} | {p['valid']}/{p['trials']} |")
    replace_section(args.results, "suite-validity", "\n".join(lines),
                    "CPU: every candidate is valid or a recorded error")


if __name__ == "__main__":
    sys.exit(main())

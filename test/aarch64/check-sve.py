#!/usr/bin/env python3
"""Scalable SVE from `ke-opt compile --target cpu:aarch64`, run under QEMU
at two vector lengths.

For every workload file (as in benchmarks/suite/small): the function is
compiled for cpu:aarch64 (default schedules, no OpenMP) and, as the
reference, for this host with no schedule (`--reference`), with the seeded
inputs and C harness of test/a64fx/check-a64fx.py. One statically linked
AArch64 program runs under `qemu-aarch64 -cpu max,sve128=on` and
`-cpu max,sve512=on`: both results must match the reference (relative L2
within the element type's tolerance). The same binary being correct at 128
and 512 bits is what shows that it is vector-length agnostic (code that
assumed a length would compute partial or overlapping tiles at the other).

Workloads whose kernels take the scalable path (docs/targets.md) must
contain scalable SVE (whilelo/cnt[bhwd]/inc[bhwd]/`mul vl` with z
registers) and die of SIGILL under `-cpu cortex-a57` (no SVE). The others
keep fixed 128-bit vectors (NEON): they must be correct and are listed as
`fixed`. --expect-scalable names the workloads that must be scalable.

Usage: check-sve.py KE_OPT WORKLOAD.mlir... [--work DIR] [--jobs N]
Exit code 0 when every workload passes; a table on stdout.
"""
import importlib.util
import math
import os
import random
import re
import signal
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "check_a64fx", os.path.join(_here, "..", "a64fx", "check-a64fx.py"))
a64fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(a64fx)

VECTOR_LENGTHS = ("sve128", "sve512")
# Instructions that only vector-length-agnostic code needs.
SCALABLE = re.compile(r"\t(whilelo|whilelt|cnt[bhwd]|inc[bhwd]|dec[bhwd]|"
                      r"addvl|rdvl)\b|mul vl\]")
# The small-suite workloads whose kernels are scalable (the rest: fixed).
# log_softmax is not among them: its kernels are fixed-length (its elementwise
# part takes math.log); its only `mul vl` instructions were the spills of z
# registers around libm's expf, gone since exp is a polynomial on the CPU.
DEFAULT_EXPECT = (r"matmul_rect|matmul_square|matmul_irregular|matmul_bf16|"
                  r"batch_matmul|relu_chain|sigmoid_chain|layernorm|rmsnorm")


def error_of(got, want):
    err2 = sum((g - w) ** 2 for g, w in zip(got, want))
    norm2 = sum(w * w for w in want)
    error = math.sqrt(err2 / norm2) if norm2 else math.sqrt(err2)
    return math.inf if math.isnan(error) else error


def check(workload, args, work):
    base = os.path.splitext(os.path.basename(workload))[0]
    row = {"workload": base, "status": "FAIL", "errors": "", "scalable": 0,
           "a57": "", "why": ""}
    try:
        name, inputs, output = a64fx.parse_signature(workload)
    except ValueError as e:
        row["why"] = str(e)
        return row
    d = os.path.join(work, base)
    os.makedirs(d, exist_ok=True)
    rng = random.Random(f"ke-sve-{base}")
    files = []
    for i, (dims, dtype) in enumerate(inputs):
        files.append(os.path.join(d, f"in{i}.bin"))
        with open(files[-1], "wb") as f:
            f.write(a64fx.random_bytes(dims, dtype, rng))
    with open(os.path.join(d, "main.c"), "w") as f:
        f.write(a64fx.harness(name, inputs, output))
    steps = [
        ("compile aarch64", [args.ke_opt, "compile", workload, "--target",
                             "cpu:aarch64", "--openmp=false", "-o",
                             f"{d}/sve.o"]),
        ("compile reference", [args.ke_opt, "compile", workload, "--target",
                               "cpu", "--reference", "-o", f"{d}/ref.o"]),
        ("link aarch64", [args.cross_cc, "-O1", "-static", f"{d}/main.c",
                          f"{d}/sve.o", "-o", f"{d}/sve", "-lm"]),
        ("link reference", [args.host_cc, "-O1", f"{d}/main.c", f"{d}/ref.o",
                            "-o", f"{d}/ref", "-lm"]),
        ("run reference", [f"{d}/ref"] + files + [f"{d}/ref.out"]),
    ]
    for vl in VECTOR_LENGTHS:
        steps.append((f"run {vl}", [args.qemu, "-cpu", f"max,{vl}=on",
                                    f"{d}/sve"] + files + [f"{d}/{vl}.out"]))
    for what, cmd in steps:
        r = a64fx.run(cmd, timeout=300)
        if r.returncode != 0:
            row["why"] = f"{what}: exit {r.returncode}: " + \
                (r.stderr.strip().splitlines() or [""])[-1][:200]
            return row
    dis = a64fx.run([args.objdump, "-d", f"{d}/sve.o"]).stdout
    row["scalable"] = sum(1 for line in dis.splitlines()
                          if SCALABLE.search(line))
    dtype = output[1]
    tol = a64fx.TOLERANCE.get(dtype, 0.0)
    want = a64fx.decode(open(f"{d}/ref.out", "rb").read(), dtype)
    errors = []
    for vl in VECTOR_LENGTHS:
        got = a64fx.decode(open(f"{d}/{vl}.out", "rb").read(), dtype)
        errors.append(error_of(got, want) if len(got) == len(want)
                      else math.inf)
    row["errors"] = "/".join(f"{e:.1e}" for e in errors)
    r = a64fx.run([args.qemu, "-cpu", "cortex-a57", f"{d}/sve"] + files +
                  [f"{d}/a57.out"], timeout=300)
    row["a57"] = ("SIGILL" if r.returncode == -signal.SIGILL
                  else f"exit {r.returncode}")
    expect = re.fullmatch(args.expect_scalable, base) is not None
    if any(e > tol for e in errors):
        row["why"] = f"wrong result (tolerance {tol:.0e})"
    elif expect and row["scalable"] == 0:
        row["why"] = "no scalable SVE instructions"
    elif row["scalable"] and row["a57"] != "SIGILL":
        row["why"] = "scalable code did not trap without SVE"
    else:
        row["status"] = "ok" if row["scalable"] else "fixed"
    return row


def main():
    p = a64fx.argument_parser(__doc__.splitlines()[0])
    p.add_argument("--expect-scalable", default=DEFAULT_EXPECT,
                   help="regex of workload names that must be scalable")
    args = p.parse_args()
    rows = a64fx.check_all(check, args)
    print(f"{'workload':24} {'status':6} {'rel L2 128/512':>17} "
          f"{'VLA insts':>9} {'cortex-a57':>10}  why")
    for r in rows:
        print(f"{r['workload']:24} {r['status']:6} {r['errors']:>17} "
              f"{r['scalable']:>9} {r['a57']:>10}  {r['why']}")
    failed = [r for r in rows if r["status"] == "FAIL"]
    scalable = sum(1 for r in rows if r["status"] == "ok")
    print(f"{len(rows) - len(failed)}/{len(rows)} workloads correct at 128 "
          f"and 512 bits, {scalable} of them scalable SVE")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

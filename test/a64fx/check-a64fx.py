#!/usr/bin/env python3
"""A64FX code from `ke-opt compile --target cpu:a64fx`, run under QEMU.

For every workload file (one func.func on tensors, as in
benchmarks/suite/small): the function is compiled for cpu:a64fx (default
schedules, SVE-512, no OpenMP: no libomp for AArch64 here) and, as the
reference, for this host with no schedule (`--reference`: plain loops). A
small C harness generated per workload reads seeded random inputs from files,
calls the kernel through its C interface (_mlir_ciface_<name>) and writes the
result. The A64FX program is linked statically with aarch64-linux-gnu-gcc and
run under `qemu-aarch64 -cpu a64fx`; its output must match the reference's by
relative L2 error within the element type's tolerance (those of ke's
evaluator). The same program must die of SIGILL under `-cpu cortex-a57`
(no SVE): proof that the kernel is SVE code.

Usage: check-a64fx.py KE_OPT WORKLOAD.mlir... [--work DIR] [--jobs N]
Exit code 0 when every workload passes; a table on stdout.
"""
import argparse
import concurrent.futures
import math
import os
import random
import re
import signal
import struct
import subprocess
import sys
import tempfile

TOLERANCE = {"f64": 1e-9, "f32": 1e-4, "f16": 1e-2, "bf16": 3e-2}
# struct format and size of each element type; bf16 is stored as its bits.
FORMAT = {"f64": ("d", 8), "f32": ("f", 4), "f16": ("e", 2), "bf16": ("H", 2),
          "i64": ("q", 8), "i32": ("i", 4), "i16": ("h", 2), "i8": ("b", 1)}


def parse_tensor(text):
    """'tensor<4x32xf32>' -> ([4, 32], 'f32')."""
    m = re.fullmatch(r"tensor<((?:\d+x)*)(\w+)>", text.strip())
    if not m:
        raise ValueError(f"unsupported type {text}")
    dims = [int(d) for d in m.group(1).split("x") if d]
    return dims, m.group(2)


def parse_signature(path):
    text = open(path).read()
    m = re.search(r"func\.func @(\w+)\((.*?)\)\s*->\s*(.*?)\s*\{", text)
    if not m:
        raise ValueError(f"{path}: no func.func with a result")
    name, args, results = m.groups()
    inputs = [parse_tensor(a.split(":", 1)[1]) for a in re.findall(
        r"%\w+\s*:\s*tensor<[^>]*>", args)]
    results = results.strip().strip("()")
    outputs = [parse_tensor(r) for r in re.findall(r"tensor<[^>]*>", results)]
    if len(outputs) != 1:
        raise ValueError(f"{path}: expected one result")
    return name, inputs, outputs[0]


def bf16_bits(value):
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def random_bytes(dims, dtype, rng):
    """Seeded values like ke's HostBuffer::fillRandom: +-[0.1, 1) for
    floats, +-[1, 8] for integers (never zero)."""
    count = math.prod(dims)
    fmt, _ = FORMAT[dtype]
    values = []
    for _ in range(count):
        sign = 1 if rng.random() < 0.5 else -1
        if dtype.startswith("i"):
            values.append(sign * rng.randint(1, 8))
        elif dtype == "bf16":
            values.append(bf16_bits(sign * (0.1 + 0.9 * rng.random())))
        else:
            values.append(sign * (0.1 + 0.9 * rng.random()))
    return struct.pack(f"<{count}{fmt}", *values)


def decode(data, dtype):
    fmt, size = FORMAT[dtype]
    values = struct.unpack(f"<{len(data) // size}{fmt}", data)
    if dtype == "bf16":
        values = [struct.unpack("<f", struct.pack("<I", v << 16))[0]
                  for v in values]
    return values


def memref_struct(rank):
    fields = "void *allocated, *aligned; int64_t offset;"
    if rank:
        fields += f" int64_t sizes[{rank}], strides[{rank}];"
    return f"typedef struct {{ {fields} }} Memref{rank};"


def harness(name, inputs, output):
    """C source: argv = input files..., output file."""
    ranks = sorted({len(d) for d, _ in inputs} | {len(output[0])})
    lines = ["#include <stdint.h>", "#include <stdio.h>",
             "#include <stdlib.h>", ""]
    lines += [memref_struct(r) for r in ranks]
    params = ", ".join([f"Memref{len(output[0])} *result"] +
                       [f"Memref{len(d)} *a{i}"
                        for i, (d, _) in enumerate(inputs)])
    lines += [f"void _mlir_ciface_{name}({params});", "",
              "static void *load(const char *path, size_t bytes) {",
              "  void *data = malloc(bytes ? bytes : 1);",
              "  FILE *f = fopen(path, \"rb\");",
              "  if (!f || fread(data, 1, bytes, f) != bytes) {",
              "    fprintf(stderr, \"cannot read %s\\n\", path); exit(2);",
              "  }",
              "  fclose(f);",
              "  return data;",
              "}", "",
              "int main(int argc, char **argv) {",
              f"  if (argc != {len(inputs) + 2}) return 2;"]
    for i, (dims, dtype) in enumerate(inputs):
        size = FORMAT[dtype][1]
        lines.append(f"  void *d{i} = load(argv[{i + 1}], "
                     f"{math.prod(dims) * size});")
        init = [f"d{i}", f"d{i}", "0"]
        if dims:
            strides = [math.prod(dims[k + 1:]) for k in range(len(dims))]
            init.append("{" + ", ".join(map(str, dims)) + "}")
            init.append("{" + ", ".join(map(str, strides)) + "}")
        lines.append(f"  Memref{len(dims)} a{i} = {{{', '.join(init)}}};")
    dims, dtype = output
    rank, size, count = len(dims), FORMAT[dtype][1], math.prod(dims)
    lines.append(f"  Memref{rank} result;")
    args = ", ".join(["&result"] + [f"&a{i}" for i in range(len(inputs))])
    lines.append(f"  _mlir_ciface_{name}({args});")
    # The result's layout is the identity (the lowering's boundary type).
    for k in range(rank):
        stride = math.prod(dims[k + 1:])
        lines.append(f"  if (result.sizes[{k}] != {dims[k]} || "
                     f"result.strides[{k}] != {stride}) return 3;")
    lines += [f"  FILE *out = fopen(argv[{len(inputs) + 1}], \"wb\");",
              f"  fwrite((char *)result.aligned + result.offset * {size}, "
              f"{size}, {count}, out);",
              "  fclose(out);",
              "  return 0;",
              "}"]
    return "\n".join(lines) + "\n"


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def check(workload, args, work):
    base = os.path.splitext(os.path.basename(workload))[0]
    row = {"workload": base, "status": "FAIL", "error": "", "tol": "",
           "sve": 0, "a57": "", "why": ""}
    try:
        name, inputs, output = parse_signature(workload)
    except ValueError as e:
        row["why"] = str(e)
        return row
    d = os.path.join(work, base)
    os.makedirs(d, exist_ok=True)
    rng = random.Random(f"ke-a64fx-{base}")
    files = []
    for i, (dims, dtype) in enumerate(inputs):
        files.append(os.path.join(d, f"in{i}.bin"))
        with open(files[-1], "wb") as f:
            f.write(random_bytes(dims, dtype, rng))
    with open(os.path.join(d, "main.c"), "w") as f:
        f.write(harness(name, inputs, output))
    steps = [
        ("compile a64fx", [args.ke_opt, "compile", workload, "--target",
                           "cpu:a64fx", "--openmp=false", "-o",
                           f"{d}/a64fx.o"]),
        ("compile reference", [args.ke_opt, "compile", workload, "--target",
                               "cpu", "--reference", "-o", f"{d}/ref.o"]),
        ("link a64fx", [args.cross_cc, "-O1", "-static", f"{d}/main.c",
                        f"{d}/a64fx.o", "-o", f"{d}/a64fx", "-lm"]),
        ("link reference", [args.host_cc, "-O1", f"{d}/main.c", f"{d}/ref.o",
                            "-o", f"{d}/ref", "-lm"]),
        ("run reference", [f"{d}/ref"] + files + [f"{d}/ref.out"]),
        ("run a64fx", [args.qemu, "-cpu", "a64fx", f"{d}/a64fx"] + files +
         [f"{d}/a64fx.out"]),
    ]
    for what, cmd in steps:
        r = run(cmd, timeout=300)
        if r.returncode != 0:
            row["why"] = f"{what}: exit {r.returncode}: " + \
                (r.stderr.strip().splitlines() or [""])[-1][:200]
            return row
    dis = run([args.objdump, "-d", f"{d}/a64fx.o"]).stdout
    # SVE instructions name z (vector) or p (predicate) registers.
    row["sve"] = sum(1 for line in dis.splitlines()
                     if re.search(r"\t.*\b[zp]\d+(\.[bhsdq])?\b", line))
    dtype = output[1]
    got = decode(open(f"{d}/a64fx.out", "rb").read(), dtype)
    want = decode(open(f"{d}/ref.out", "rb").read(), dtype)
    tol = TOLERANCE.get(dtype, 0.0)
    if len(got) != len(want):
        row["why"] = "result sizes differ"
        return row
    err2 = sum((g - w) ** 2 for g, w in zip(got, want))
    norm2 = sum(w * w for w in want)
    error = math.sqrt(err2 / norm2) if norm2 else math.sqrt(err2)
    if math.isnan(error):
        error = math.inf
    row["error"], row["tol"] = f"{error:.2e}", f"{tol:.0e}"
    r = run([args.qemu, "-cpu", "cortex-a57", f"{d}/a64fx"] + files +
            [f"{d}/a57.out"], timeout=300)
    row["a57"] = ("SIGILL" if r.returncode == -signal.SIGILL
                  else f"exit {r.returncode}")
    if error > tol:
        row["why"] = "wrong result"
    elif row["a57"] != "SIGILL":
        row["why"] = "did not trap without SVE"
    elif row["sve"] == 0:
        row["why"] = "no SVE instructions"
    else:
        row["status"] = "ok"
    return row


def argument_parser(description):
    """The options every aarch64 check takes (check-sve.py adds its own)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("ke_opt")
    p.add_argument("workloads", nargs="+")
    p.add_argument("--work", help="keep the files here (default: a "
                   "temporary directory)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--cross-cc", default="aarch64-linux-gnu-gcc")
    p.add_argument("--host-cc", default="cc")
    p.add_argument("--qemu", default="qemu-aarch64")
    p.add_argument("--objdump", default="llvm-objdump-22")
    return p


def check_all(check_one, args):
    """check_one(workload, args, work) for every workload, `--jobs` at a
    time, in name order, in --work or a temporary directory."""
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or tmp
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            return list(pool.map(lambda w: check_one(w, args, work),
                                 sorted(args.workloads)))


def main():
    args = argument_parser(__doc__.splitlines()[0]).parse_args()
    rows = check_all(check, args)
    print(f"{'workload':24} {'status':6} {'rel L2':>9} {'tol':>6} "
          f"{'SVE insts':>9} {'cortex-a57':>10}  why")
    for r in rows:
        print(f"{r['workload']:24} {r['status']:6} {r['error']:>9} "
              f"{r['tol']:>6} {r['sve']:>9} {r['a57']:>10}  {r['why']}")
    failed = [r for r in rows if r["status"] != "ok"]
    print(f"{len(rows) - len(failed)}/{len(rows)} workloads ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Random valid linalg.generic programs, compiled for every target family.

Each program is one linalg.generic over 1-4 loops of odd extents (some
loops reductions), with 1-3 inputs read through permuted, broadcast or
reduced maps, an output read through a permutation of the parallel loops,
one element type of f32, f16, bf16, f64 or i32, and a body of arithmetic
and math ops (exp, tanh, sqrt, abs for floats) combined into the output
(summed or maxed over the reduction loops; a fill first). The same seed
gives the same programs.

For each program and target (cpu, cuda:sm_90, rocm:gfx942 by default),
`ke-opt compile` must exit 0 with a code object: a failure (a located
error), a crash or a hang is a row of the table and makes the exit code 1.

Usage: check-random-programs.py KE_OPT [--count N] [--seed S]
           [--targets cpu,cuda:sm_90,rocm:gfx942] [--jobs J] [--keep DIR]
           [--build-dir DIR]

With --files, the given MLIR files are compiled instead of generated ones
(the full-size suite: `ctest -R compile-full-suite`).

With --build-dir, the pip wheel of ptxas and libdevice that
scripts/fetch-ptxas.sh installs there serves the CUDA target when
$KE_PTXAS is unset (as in lit.cfg.py).
"""
import argparse
import concurrent.futures
import os
import random
import subprocess
import sys
import tempfile

FLOATS = ["f32", "f16", "bf16", "f64"]
TYPES = FLOATS + ["i32"]
DIMS = "ijkl"


def make_program(rng, index):
    """One program's MLIR text and a one-line description."""
    elem = rng.choice(TYPES)
    is_float = elem in FLOATS
    loops = rng.randint(1, 4)
    extents = [rng.choice([1, 3, 5, 7, 13, 17, 31, 33, 63, 65, 97, 129])
               for _ in range(loops)]
    # At least one loop is parallel unless the program is a full reduction.
    kinds = [rng.random() < 0.35 for _ in range(loops)]  # True: reduction
    if all(kinds) and rng.random() < 0.5:
        kinds[0] = False
    parallel = [d for d in range(loops) if not kinds[d]]
    reduction = [d for d in range(loops) if kinds[d]]

    # The output: the parallel loops, possibly permuted.
    out_dims = parallel[:]
    rng.shuffle(out_dims)
    # Inputs: subsets (broadcasts) and permutations of the loops; together
    # with the output they cover every loop (ranges are inferred from them).
    inputs = []
    for _ in range(rng.randint(1, 3)):
        dims = [d for d in range(loops) if rng.random() < 0.7]
        rng.shuffle(dims)
        inputs.append(dims)
    covered = set(out_dims).union(*inputs)
    missing = [d for d in range(loops) if d not in covered]
    if missing:
        inputs[0] = inputs[0] + missing

    def tensor(dims):
        shape = "x".join(str(extents[d]) for d in dims)
        return f"tensor<{shape}x{elem}>" if dims else f"tensor<{elem}>"

    def amap(dims):
        names = ", ".join(DIMS[d] for d in range(loops))
        results = ", ".join(DIMS[d] for d in dims)
        return f"affine_map<({names}) -> ({results})>"

    args = ", ".join(f"%in{n}: {tensor(d)}" for n, d in enumerate(inputs))
    out_type = tensor(out_dims)
    lines = [f"func.func @random_{index}({args}) -> {out_type} {{"]
    combine_max = rng.random() < 0.3 and bool(reduction)
    if is_float:
        init = "0xFF800000" if combine_max and elem == "f32" else "0.0"
        if combine_max and elem != "f32":
            init = "-1.0e+04" if elem != "f64" else "-1.0e+300"
        lines.append(f"  %init = arith.constant {init} : {elem}")
    else:
        init = "-2147483648" if combine_max else "0"
        lines.append(f"  %init = arith.constant {init} : {elem}")
    lines.append(f"  %e = tensor.empty() : {out_type}")
    if reduction:
        lines.append(f"  %f = linalg.fill ins(%init : {elem}) outs(%e : {out_type}) -> {out_type}")
        out = "%f"
    else:
        out = "%e"
    maps = ", ".join(amap(d) for d in inputs + [out_dims])
    iters = ", ".join('"reduction"' if k else '"parallel"' for k in kinds)
    ins = ", ".join(f"%in{n}" for n in range(len(inputs)))
    in_types = ", ".join(tensor(d) for d in inputs)
    lines.append(f"  %r = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iters}]}}")
    lines.append(f"    ins({ins} : {in_types}) outs({out} : {out_type}) {{")
    block_args = ", ".join(f"%a{n}: {elem}" for n in range(len(inputs)))
    lines.append(f"  ^bb0({block_args}, %acc: {elem}):")

    # The body: a random chain over the inputs.
    values = [f"%a{n}" for n in range(len(inputs))]
    ops = []
    counter = [0]

    def fresh():
        counter[0] += 1
        return f"%v{counter[0]}"

    for _ in range(rng.randint(1, 5)):
        v = fresh()
        x = rng.choice(values)
        if is_float:
            choice = rng.choice(["addf", "mulf", "subf", "maximumf", "exp",
                                 "tanh", "sqrt", "absf"])
            if choice in ("exp", "tanh", "absf"):
                ops.append(f"    {v} = math.{choice} {x} : {elem}")
            elif choice == "sqrt":
                a = fresh()
                ops.append(f"    {a} = math.absf {x} : {elem}")
                ops.append(f"    {v} = math.sqrt {a} : {elem}")
            else:
                y = rng.choice(values)
                ops.append(f"    {v} = arith.{choice} {x}, {y} : {elem}")
        else:
            choice = rng.choice(["addi", "muli", "subi", "maxsi", "absi"])
            if choice == "absi":
                ops.append(f"    {v} = math.absi {x} : {elem}")
            else:
                y = rng.choice(values)
                ops.append(f"    {v} = arith.{choice} {x}, {y} : {elem}")
        values.append(v)
    result = values[-1]
    if reduction:
        v = fresh()
        if is_float:
            op = "arith.maximumf" if combine_max else "arith.addf"
        else:
            op = "arith.maxsi" if combine_max else "arith.addi"
        ops.append(f"    {v} = {op} %acc, {result} : {elem}")
        result = v
    lines += ops
    lines.append(f"    linalg.yield {result} : {elem}")
    lines.append(f"  }} -> {out_type}")
    lines.append(f"  return %r : {out_type}")
    lines.append("}")
    what = (f"{elem}, loops {'x'.join(map(str, extents))} "
            f"({''.join('r' if k else 'p' for k in kinds)}), "
            f"{len(inputs)} input(s)")
    return "\n".join(lines) + "\n", what


def compile_one(ke_opt, path, target, work):
    base = os.path.splitext(os.path.basename(path))[0]
    out = os.path.join(work, f"{base}.{target.replace(':', '_')}.out")
    try:
        r = subprocess.run([ke_opt, "compile", path, "--target", target,
                            "-o", out], capture_output=True, text=True,
                           timeout=300)
    except subprocess.TimeoutExpired:
        return "hang", "ke-opt compile ran over 300 s"
    if r.returncode < 0:
        return "crash", f"signal {-r.returncode}"
    if r.returncode != 0:
        errors = [l for l in r.stderr.splitlines() if "error" in l]
        return "fail", (errors[0] if errors else r.stderr.strip()[-300:])
    if not os.path.exists(out):
        return "fail", "no output written"
    return "ok", ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ke_opt")
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--targets", default="cpu,cuda:sm_90,rocm:gfx942")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", help="write the programs and outputs here")
    parser.add_argument("--build-dir", help="ke's build directory (ptxas wheel)")
    parser.add_argument("--files", nargs="+",
                        help="compile these MLIR files instead of random programs")
    args = parser.parse_args()
    if args.build_dir and not os.environ.get("KE_PTXAS"):
        wheel = os.path.join(args.build_dir, "ptxas", "nvidia", "cuda_nvcc",
                             "bin", "ptxas")
        if os.path.exists(wheel):
            os.environ["KE_PTXAS"] = wheel

    rng = random.Random(args.seed)
    work = args.keep or tempfile.mkdtemp(prefix="ke-random-programs-")
    os.makedirs(work, exist_ok=True)
    programs = []
    if args.files:
        programs = [(path, "file") for path in args.files]
    for i in range(0 if args.files else args.count):
        text, what = make_program(rng, i)
        path = os.path.join(work, f"random_{i}.mlir")
        with open(path, "w") as f:
            f.write(text)
        programs.append((path, what))

    targets = args.targets.split(",")
    jobs = [(p, w, t) for p, w in programs for t in targets]
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(
            lambda job: compile_one(args.ke_opt, job[0], job[2], work), jobs))
    counts = {}
    for (path, what, target), (status, why) in zip(jobs, results):
        counts.setdefault(target, {}).setdefault(status, 0)
        counts[target][status] += 1
        if status != "ok":
            failures += 1
            print(f"{status.upper()} {os.path.basename(path)} [{what}] on "
                  f"{target}: {why}")
    for target in targets:
        summary = ", ".join(f"{n} {s}" for s, n in sorted(counts[target].items()))
        print(f"{target}: {summary}")
    if args.files:
        label = f"{len(programs)} files, {len(targets)} targets"
    else:
        label = (f"random programs (seed {args.seed}, {args.count} programs, "
                 f"{len(targets)} targets)")
    print(f"{label}: {len(jobs) - failures} passed, {failures} failed")
    if not args.keep:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Lower bounds on a problem's time at a target's numerics: which
KernelBench problems can an IEEE f32 kernel on CUDA cores beat eager on?

For each problem (built on the meta device: no memory, no GPU) it counts
the contraction FLOPs with torch's FlopCounterMode (convolutions,
transposed convolutions and matmuls, at their true size: a transposed
convolution's zeros are not counted) and the bytes every kernel must move
at least once (the inputs, the parameters and the output). The time bound
is max(FLOPs / peak, bytes / bandwidth), the roofline of the device with
f32 FMA on CUDA cores only (ke's default for f32: IEEE f32, no TF32).

Given eager's measured times (a harness results folder, or a markdown
table of `| level2/NAME | outcome | ke µs | eager µs | ...` rows), it
marks every problem where eager is faster than that bound: no f32
CUDA-core kernel can reach speedup 1 there, whatever its schedule. PyTorch
runs f32 convolutions on cuDNN with TF32 allowed by default
(torch.backends.cudnn.allow_tf32), so eager can beat an f32 roofline.

    build/venv/bin/python benchmarks/kernelbench/bounds.py \\
        ../shared/kernelbench/level2 --eager docs/kernelbench.md \\
        --section "### fp32"

Peaks default to an NVIDIA H200 SXM: 132 SMs x 128 f32 lanes x 2 FLOP x
1.98 GHz = 66.9 TFLOP/s, 4.8 TB/s.
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from problems import build_model, find_problems, make_inputs, tensor_inputs  # noqa: E402


def count(torch, problem):
    """(contraction FLOPs, minimum bytes) of one problem at its own sizes."""
    from torch.utils.flop_counter import FlopCounterMode
    namespace = problem.load()
    model = build_model(torch, namespace, "meta")
    inputs = make_inputs(torch, namespace, 0, "meta")
    with FlopCounterMode(display=False) as counter:
        output = model(*inputs)
    outputs = output if isinstance(output, (tuple, list)) else [output]
    tensors = (tensor_inputs(torch, inputs) + list(model.parameters()) +
               [o for o in outputs if isinstance(o, torch.Tensor)])
    nbytes = sum(t.numel() * t.element_size() for t in tensors)
    return counter.get_total_flops(), nbytes


def read_eager(path, section=None):
    """name -> eager µs, from a harness folder's results.jsonl or from the
    rows of a markdown table (after the heading `section`, when given)."""
    if os.path.isdir(path):
        times = {}
        with open(os.path.join(path, "results.jsonl")) as f:
            for line in f:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                eager = (record.get("times") or {}).get("eager")
                if eager:
                    times[record["name"]] = eager * 1e6
        return times
    times, active = {}, section is None
    with open(path) as f:
        for line in f:
            if section is not None and line.startswith("#"):
                active = line.strip() == section
                continue
            if not active or not line.startswith("| level"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            try:
                times.setdefault(cells[0], float(cells[3]))
            except (IndexError, ValueError):
                pass
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="problem files or folders")
    parser.add_argument("--eager", help="results folder or markdown file")
    parser.add_argument("--section", help="the markdown heading of the table")
    parser.add_argument("--tflops", type=float, default=66.9,
                        help="f32 CUDA-core peak, TFLOP/s")
    parser.add_argument("--bandwidth", type=float, default=4800.0,
                        help="memory bandwidth, GB/s")
    parser.add_argument("--json", help="write the rows here too")
    args = parser.parse_args(argv)

    import torch
    eager = read_eager(args.eager, args.section) if args.eager else {}
    rows = []
    print("| problem | GFLOP | MB moved | f32 bound µs | eager µs | eager / bound | eager TFLOP/s |")
    print("|---|---|---|---|---|---|---|")
    for problem in find_problems(args.paths):
        try:
            flops, nbytes = count(torch, problem)
        except Exception as e:  # a problem that does not build on meta
            print("| %s | not counted: %s |" % (problem.name,
                                                str(e).splitlines()[0][:80]))
            continue
        bound = max(flops / (args.tflops * 1e12),
                    nbytes / (args.bandwidth * 1e9)) * 1e6
        row = {"name": problem.name, "flops": flops, "bytes": nbytes,
               "bound_us": bound, "eager_us": eager.get(problem.name)}
        rows.append(row)
        e = row["eager_us"]
        print("| %s | %.1f | %.0f | %.0f | %s | %s | %s |" % (
            problem.name, flops / 1e9, nbytes / 1e6, bound,
            "%.0f" % e if e else "", "%.2f" % (e / bound) if e else "",
            "%.1f" % (flops / e / 1e6) if e else ""))
    timed = [r for r in rows if r["eager_us"]]
    below = [r for r in timed if r["eager_us"] < r["bound_us"]]
    print("\n%d problems counted, %d with eager's time; eager is faster than "
          "the f32 CUDA-core bound on %d: no IEEE f32 kernel on CUDA cores "
          "reaches speedup 1 there, so fast_1 <= %d/%d at these numerics."
          % (len(rows), len(timed), len(below), len(rows) - len(below),
             len(rows)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""ke and eager PyTorch against the exact result, for prepared problems.

KernelBench checks a candidate against eager PyTorch in the same precision.
In bf16 (or fp16) eager's own error can be as large as the tolerance, so a
wrong-result says little on its own. This script runs trial 0 of each
problem (the harness's seeds) through ke's prepared artifact and through
eager PyTorch, and compares both with the exact result: the same model
with its (cast) weights and inputs in float64. For each pair it prints the
largest absolute difference, the mean, and how many elements fall outside
KernelBench's atol = rtol of the dtype (TF32 off throughout).

Usage: exact.py DIR PROBLEM.py... (DIR as `harness.py prepare --out DIR`
wrote it; on a CUDA target this runs on the GPU)
"""

import argparse
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for path in (HERE, os.path.join(ROOT, "python-bindings")):
    if path not in sys.path:
        sys.path.insert(0, path)

from problems import (Problem, build_model, make_inputs,  # noqa: E402
                      tensor_inputs)
import protocol  # noqa: E402


def compare(torch, actual, reference, tol):
    """Largest and mean absolute difference, and elements outside tol."""
    difference = (actual.double() - reference).abs()
    outside = difference > tol + tol * reference.abs()
    return {"max": difference.max().item(),
            "mean": difference.mean().item(),
            "outside": int(outside.sum().item())}


def measure(torch, ke, directory, meta, problem):
    dtype = {"fp32": None, "fp16": torch.float16,
             "bf16": torch.bfloat16}[meta["dtype"]]
    device = "cuda" if meta["target"].startswith("cuda:") else "cpu"
    suffix = ".so" if device == "cuda" else ".kem"
    namespace = problem.load(meta["scale"])
    model = build_model(torch, namespace, device, dtype)
    weights = [w.detach() for w in ke.model_weights(model)]
    compiled = ke.load(os.path.join(directory, problem.slug + suffix))
    inputs = make_inputs(torch, namespace, protocol.TRIAL_SEED, device, dtype)
    exact_inputs = [x.to(torch.float64) if isinstance(x, torch.Tensor) and
                    x.is_floating_point() else x for x in inputs]
    with torch.no_grad():
        exact_model = copy.deepcopy(model).to(torch.float64)
        exact = exact_model(*exact_inputs)
        del exact_model
        eager = model(*inputs)
        output = compiled(*tensor_inputs(torch, inputs), *weights)
    first = (lambda x: x[0] if isinstance(x, (tuple, list)) else x)
    exact, eager, output = first(exact), first(eager), first(output)
    tol = protocol.TOLERANCES[meta["dtype"]]
    return {"name": problem.name, "dtype": meta["dtype"],
            "ke_vs_eager": compare(torch, output, eager.double(), tol),
            "ke_vs_exact": compare(torch, output, exact, tol),
            "eager_vs_exact": compare(torch, eager, exact, tol)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("problems", nargs="+")
    args = parser.parse_args()
    import torch
    import ke
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with open(os.path.join(args.dir, "prepare.json")) as f:
        meta = json.load(f)
    prepared = {}
    with open(os.path.join(args.dir, "prepare.jsonl")) as f:
        for line in f:
            if line.strip():
                status = json.loads(line)
                prepared[status["name"]] = status
    for path in args.problems:
        problem = Problem(path)
        status = prepared.get(problem.name, {"outcome": "not prepared"})
        if status["outcome"] != "prepared":
            # Nothing to compare: say why, go on with the next.
            print(json.dumps({"name": problem.name,
                              "outcome": status["outcome"],
                              "detail": status.get("detail", "")}),
                  flush=True)
            continue
        print(json.dumps(measure(torch, ke, args.dir, meta, problem)),
              flush=True)


if __name__ == "__main__":
    main()

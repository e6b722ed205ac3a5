#!/usr/bin/env python3
"""Where a KernelBench problem's time goes: ke's kernels and eager's, side by side.

For each problem, the artifact `harness.py prepare` compiled for it (a .so in
PREPARED) and eager PyTorch each run warm, then `--calls` times under
torch.profiler (CUPTI sees the kernels ke's library launches through the
driver API as well as PyTorch's). Prints, per side, the GPU time per call and
its kernels, longest first: the "name the cause" column of docs/kernelbench.md
comes from here. No correctness check and no L2 flush (harness.py `run` does
both); these are attributions, not the reported speedups.

    python3 benchmarks/kernelbench/kernel_profile.py PREPARED PROBLEM.py... [--top 8]
"""
import argparse
import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for path in (HERE, os.path.join(ROOT, "python-bindings")):
    if path not in sys.path:
        sys.path.insert(0, path)


def kernel_times(torch, call, calls):
    """{kernel name: (total us over `calls`, launches)} of `call`'s kernels."""
    from torch.profiler import ProfilerActivity, profile
    with torch.no_grad():
        call()  # warm: module loading, autotuning, allocations
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                call()
            torch.cuda.synchronize()
    totals = collections.defaultdict(lambda: [0.0, 0])
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            entry = totals[event.name]
            entry[0] += event.device_time_total
            entry[1] += 1
    return totals


def report(side, totals, calls, top):
    total = sum(t for t, _ in totals.values()) / calls
    print(f"  {side}: {total:.1f} us of kernels per call, "
          f"{sum(n for _, n in totals.values()) // calls} launches")
    ranked = sorted(totals.items(), key=lambda kv: -kv[1][0])
    for name, (t, n) in ranked[:top]:
        print(f"    {t / calls:10.1f} us {100 * t / calls / max(total, 1e-9):5.1f}%"
              f"  x{n // calls:<3} {name[:110]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prepared")
    parser.add_argument("problems", nargs="+")
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    import torch
    import ke
    from problems import Problem, build_model, make_inputs, tensor_inputs
    for path in args.problems:
        problem = Problem(path)
        artifact = os.path.join(args.prepared, problem.slug + ".so")
        print(f"== {problem.name}")
        if not os.path.exists(artifact):
            print(f"  no artifact {artifact}")
            continue
        namespace = problem.load()
        model = build_model(torch, namespace, "cuda", torch.float32)
        inputs = make_inputs(torch, namespace, 0, "cuda", torch.float32)
        compiled = ke.load(artifact)
        weights = [w.detach() for w in ke.model_weights(model)]
        tensors = tensor_inputs(torch, inputs)
        report("ke", kernel_times(torch, lambda: compiled(*tensors, *weights),
                                  args.calls), args.calls, args.top)
        report("eager", kernel_times(torch, lambda: model(*inputs), args.calls),
               args.calls, args.top)
        if hasattr(compiled, "release"):
            compiled.release()
        del model, inputs, tensors, weights
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())

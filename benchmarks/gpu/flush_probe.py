#!/usr/bin/env python3
"""How the L2 flush between timed runs changes memory-bound timings.

Times a few memory-bound PyTorch ops (and a device copy of the same size)
on 4096x4096 fp32 with three flushes before each run: none, a memset of a
buffer twice the L2 (leaves the L2 full of dirty lines that the timed kernel
then writes back), and a read of such a buffer (leaves clean lines, which
are dropped for free). Prints the median of 50 runs of each as GB/s of
bytes read + written. benchmarks/gpu/run.py and ke's GPU runner flush by
reading (docs/measurement.md has the numbers this printed on an H200).

    python3 benchmarks/gpu/flush_probe.py
"""
import statistics

import torch


def main():
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or (64 << 20)
    # Zeroed once, so the read flush sums the same (finite) values every run.
    flush = torch.zeros(2 * l2 // 4, dtype=torch.float32, device="cuda")
    sink = torch.empty((), device="cuda")
    flushes = {
        "none": lambda: None,
        "memset": lambda: flush.zero_(),
        # One kernel, no allocation: run.py's flush.
        "read": lambda: torch.sum(flush, dim=0, out=sink),
    }
    n = 4096
    x = torch.randn(n, n, device="cuda")
    y = torch.empty_like(x)
    g = torch.randn(n, device="cuda")
    b = torch.randn(n, device="cuda")
    mb = n * n * 4
    ops = {
        "copy 64MB": (lambda: y.copy_(x), 2 * mb),
        "sum rows": (lambda: torch.sum(x, dim=1), mb),
        "softmax": (lambda: torch.softmax(x, dim=1), 2 * mb),
        "layernorm": (lambda: torch.nn.functional.layer_norm(x, (n,), g, b), 2 * mb),
        "relu": (lambda: torch.relu(x), 2 * mb),
    }
    big = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    big2 = torch.empty_like(big)
    ops["copy 1GB"] = (lambda: big2.copy_(big), 2 << 30)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    print(f"device {props.name}, L2 {l2 >> 20} MB, PyTorch {torch.__version__}")
    for name, (fn, moved) in ops.items():
        cells = []
        for fname, fl in flushes.items():
            fn()
            times = []
            for _ in range(50):
                fl()
                start.record()
                fn()
                stop.record()
                stop.synchronize()
                times.append(start.elapsed_time(stop) * 1e-3)
            t = statistics.median(times)
            cells.append(f"{fname} {t * 1e6:8.1f} us {moved / t / 1e9:6.0f} GB/s")
        print(f"{name:10s} | " + " | ".join(cells))


if __name__ == "__main__":
    main()

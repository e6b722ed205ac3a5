#!/usr/bin/env python3
"""Prints the JSON summary of `ke-opt tune` as a table."""
import json
import sys


def fmt(seconds):
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"


def main():
    s = json.load(sys.stdin)
    print(f"target {s['target']} ({s['chip']}), {s['search']} search, "
          f"{s['trials_per_workload']} trials per workload on average "
          f"({s.get('explore', '-')} explored), seed {s['seed']}, "
          f"database {s.get('database') or 'none'}")
    print(f"{'op':28} {'reference':>11} {'untuned':>11} {'best':>11} {'GFLOP/s':>8} "
          f"{'vs untuned':>10} {'vs ref':>7} {'valid':>7} {'search':>22}  errors")
    for w in s["workloads"]:
        if "skipped" in w:
            print(f"{w['op']:28} skipped: {w['skipped']}")
            continue
        if "fused_into" in w:
            print(f"{w['op']:28} tuned inside the kernel of workload {w['fused_into'][:8]}")
            continue
        ref, un, best = w["reference_seconds"], w["untuned_seconds"], w["best_seconds"]
        gflops = f"{w['best_gflops']:.1f}" if w.get("best_gflops") else "-"
        vs_un = f"{un / best:.2f}x" if un and best else "-"
        vs_ref = f"{ref / best:.1f}x" if ref and best else "-"
        errors = ", ".join(f"{k} {v}" for k, v in w["errors"].items() if v) or "none"
        search = (f"{w.get('explored', 0)}+{w.get('droplet', 0)} "
                  f"(+{w.get('previous', 0)} db) {w.get('stopped', '')}")
        print(f"{w['op'][:28]:28} {fmt(ref):>11} {fmt(un):>11} {fmt(best):>11} {gflops:>8} "
              f"{vs_un:>10} {vs_ref:>7} {w['valid']:>3}/{w['trials']:<3} {search:>22}  {errors}")


if __name__ == "__main__":
    main()

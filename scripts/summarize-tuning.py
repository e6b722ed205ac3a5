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
        # The untuned default as the final check re-timed it beside the best
        # (one conditions for both), when it did.
        ref, best = w["reference_seconds"], w["best_seconds"]
        un = w.get("untuned_rechecked_seconds") or w["untuned_seconds"]
        gflops = f"{w['best_gflops']:.1f}" if w.get("best_gflops") else "-"
        # Against the default's re-timing beside the winner when the final
        # check timed it (the summary's own ratio), else its first time.
        speedup = w.get("speedup_over_untuned")
        vs_un = f"{speedup:.2f}x" if speedup else "-"
        vs_ref = f"{ref / best:.1f}x" if ref and best else "-"
        errors = ", ".join(f"{k} {v}" for k, v in w["errors"].items() if v) or "none"
        search = (f"{w.get('explored', 0)}+{w.get('droplet', 0)} "
                  f"(+{w.get('previous', 0)} db) {w.get('stopped', '')}")
        print(f"{w['op'][:28]:28} {fmt(ref):>11} {fmt(un):>11} {fmt(best):>11} {gflops:>8} "
              f"{vs_un:>10} {vs_ref:>7} {w['valid']:>3}/{w['trials']:<3} {search:>22}  {errors}")
        check = w.get("final_check")
        if check:
            times = ", ".join(
                ("untuned " if f.get("untuned") else "") +
                (fmt(f["seconds"]) if "seconds" in f else f.get("error", "failed"))
                for f in check["finalists"])
            outcome = ("replaced the search's best" if check["changed_best"]
                       else "kept the search's best")
            print(f"{'':28} final check, {check['rounds']} rounds: {times}; {outcome}")


if __name__ == "__main__":
    main()

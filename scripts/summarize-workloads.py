#!/usr/bin/env python3
"""Prints `ke-opt workloads` JSON lines as a table: one row per workload."""
import json
import sys


def human(n, unit):
    if n is None:
        return "dynamic"
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if n >= scale:
            return f"{n / scale:.2f} {prefix}{unit}"
    return f"{n} {unit}"


def main():
    rows = [json.loads(line) for line in sys.stdin if line.strip()]
    print(f"{'key':10} {'op':32} {'kind':13} {'count':>5} {'flops':>12} "
          f"{'bytes':>11} {'fusable':>7}  shapes")
    for w in rows:
        shapes = " ".join("x".join("?" if d is None else str(d) for d in s)
                          or "scalar" for s in w["shapes"])
        types = ",".join(sorted(set(w["element_types"])))
        print(f"{w['key'][:8]:10} {w['op']:32} {w['kind']:13} {w['count']:>5} "
              f"{human(w['flops'], 'FLOP'):>12} {human(w['bytes'], 'B'):>11} "
              f"{len(w['fusible']):>7}  {shapes} ({types})")
    total = sum((w["flops"] or 0) * w["count"] for w in rows)
    print(f"{len(rows)} workloads, {sum(w['count'] for w in rows)} ops, "
          f"{human(total, 'FLOP')} per run")


if __name__ == "__main__":
    main()

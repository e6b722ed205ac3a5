#!/usr/bin/env python3
"""Issue #17, item 4: ke against TVM MetaSchedule on this CPU, equal trials.

For each problem (the full suite's sgemm 1024^3, conv2d NHWC 8x58x58x64 *
3x3x64x64, softmax and layer norm over 4096 x 4096, all f32):

1. ke: `ke-opt tune FILE --target cpu --trials T --explore 3T/4` into a
   database of its own (no transfer from other workloads), wall time taken;
2. MetaSchedule: the same computation written in TE (topi for softmax and
   layer norm), `tune_tir` with `max_trials_global` T, its XGBoost cost
   model and evolutionary search, on an llvm target for this CPU with the
   same number of cores, wall time taken;
3. both bests re-timed side by side, alternating, --rounds times: ke's with
   `ke-opt bench` (the best record; inputs rotated over sets larger than the
   L3, median per call), MetaSchedule's compiled best here with the same
   protocol (three input sets whose total exceeds the L3 rotated, one
   synchronous call timed at a time, median). MetaSchedule's own
   time_evaluator (warm buffers, mean) is not used.

Run it in its own virtual environment (TVM pins its own numpy):

    python3 -m venv build/peers-venv
    build/peers-venv/bin/pip install apache-tvm==0.27.0 \\
        apache-tvm-ffi==0.1.14.post1 numpy xgboost psutil cloudpickle
    build/peers-venv/bin/python benchmarks/peers/metaschedule.py --trials 300

apache-tvm-ffi is pinned: 0.1.15.x segfaults in MetaSchedule's
database (save_json). Prints a Markdown table and writes --out (JSON)
after every problem.
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ke_cli import BUILD, ROOT, ke  # noqa: E402
SUITE = os.path.join(ROOT, "benchmarks", "suite", "full")
L3_BYTES = 32 << 20


def te_problem(name):
    """(TE tensors: inputs then output, numpy input shapes) of `name`."""
    from tvm import te, topi
    if name == "matmul_square":
        a = te.placeholder((1024, 1024), name="A")
        b = te.placeholder((1024, 1024), name="B")
        k = te.reduce_axis((0, 1024), name="k")
        c = te.compute((1024, 1024), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
        return [a, b, c]
    if name == "conv2d_nhwc":
        x = te.placeholder((8, 58, 58, 64), name="I")
        w = te.placeholder((3, 3, 64, 64), name="F")
        kh = te.reduce_axis((0, 3), name="kh")
        kw = te.reduce_axis((0, 3), name="kw")
        ci = te.reduce_axis((0, 64), name="ci")
        o = te.compute((8, 56, 56, 64), lambda n, h, wo, f: te.sum(
            x[n, h + kh, wo + kw, ci] * w[kh, kw, ci, f], axis=[kh, kw, ci]), name="O")
        return [x, w, o]
    if name == "softmax":
        x = te.placeholder((4096, 4096), name="X")
        return [x, topi.nn.softmax(x, axis=1)]
    if name == "layernorm":
        x = te.placeholder((4096, 4096), name="X")
        g = te.placeholder((4096,), name="G")
        b = te.placeholder((4096,), name="B")
        return [x, g, b, topi.nn.layer_norm(x, g, b, axis=[1], epsilon=1e-5)]
    raise ValueError(name)


def ke_best_seconds(path, db):
    bench = ke("bench", path, "--target", "cpu", "--db", db)
    times = [w["tuned"]["seconds"] for w in bench["workloads"]
             if "tuned" in w and "seconds" in w["tuned"]]
    return sum(times)


class MetaScheduleRun:
    """MetaSchedule's tuning of one problem and its compiled best."""

    def __init__(self, name, trials, workdir, cores, mcpu, reuse=False):
        import tvm
        from tvm import te
        from tvm.s_tir import meta_schedule as ms
        import numpy as np
        self.tvm, self.np = tvm, np
        tensors = te_problem(name)
        mod = tvm.IRModule({"main": te.create_prim_func(tensors)})
        target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu, "num-cores": cores})
        work_dir = os.path.join(workdir, name)
        records = os.path.join(work_dir, "database_tuning_record.json")
        if reuse and os.path.exists(records):
            # The records of an earlier run (--reuse-metaschedule): its best
            # is compiled and timed again; its tuning time is that run's.
            database = ms.database.JSONDatabase(work_dir=work_dir)
            self.tuning_seconds = None
        else:
            start = time.time()
            database = ms.tune_tir(mod, target, work_dir=work_dir,
                                   max_trials_global=trials,
                                   num_trials_per_iter=64)
            self.tuning_seconds = time.time() - start
        schedule = ms.tir_integration.compile_tir(database, mod, target)
        self.function = tvm.compile(schedule.mod, target=target)["main"]
        shapes = [[int(d) for d in t.shape] for t in tensors]
        set_bytes = sum(4 * int(np.prod(s)) for s in shapes)
        sets = max(3, -(-3 * L3_BYTES // set_bytes) if set_bytes < L3_BYTES else 3)
        rng = np.random.default_rng(0)
        self.sets = [[tvm.runtime.tensor(rng.standard_normal(s).astype("float32"))
                      for s in shapes] for _ in range(sets)]

    def seconds(self, calls=30):
        times = []
        for i in range(calls + 3):
            args = self.sets[i % len(self.sets)]
            start = time.perf_counter()
            self.function(*args)
            elapsed = time.perf_counter() - start
            if i >= 3:
                times.append(elapsed)
        return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--only", help="comma-separated problem names")
    parser.add_argument("--mcpu", help="MetaSchedule's LLVM CPU (default: this "
                        "host's, as `ke-opt target cpu` names it, so both sides "
                        "compile for the same chip; the runs up to 2026-11-29 "
                        "used znver4 on a Zen 5)")
    parser.add_argument("--workdir", default=os.path.join(BUILD, "peers"))
    parser.add_argument("--out", help="write the results as JSON here too")
    parser.add_argument("--reuse-metaschedule", action="store_true",
                        help="time the best of MetaSchedule records already in "
                        "--workdir instead of tuning again (tuning time: n/a)")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    if not args.mcpu:
        args.mcpu = ke("target", "cpu")["chip"]
    names = ["matmul_square", "conv2d_nhwc", "softmax", "layernorm"]
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    os.environ.setdefault("TVM_NUM_THREADS", str(args.cores))
    results = []
    for name in names:
        path = os.path.join(SUITE, name + ".mlir")
        db = os.path.join(args.workdir, name + "-ke.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.remove(db + suffix)
        print(f"[peers] {name}: ke, {args.trials} trials", file=sys.stderr, flush=True)
        start = time.time()
        ke("tune", path, "--target", "cpu", "--trials", str(args.trials),
           "--explore", str(args.trials * 3 // 4), "--db", db, "--no-progress",
           "--transfer-samples", "0")
        ke_tuning = time.time() - start
        print(f"[peers] {name}: MetaSchedule, {args.trials} trials", file=sys.stderr,
              flush=True)
        peer = MetaScheduleRun(name, args.trials, args.workdir, args.cores,
                               args.mcpu, reuse=args.reuse_metaschedule)
        rounds = {"ke": [], "metaschedule": []}
        for _ in range(args.rounds):
            rounds["ke"].append(ke_best_seconds(path, db))
            rounds["metaschedule"].append(peer.seconds())
        result = {"problem": name, "trials": args.trials,
                  "ke_tuning_seconds": ke_tuning,
                  "metaschedule_tuning_seconds": peer.tuning_seconds,
                  "rounds": rounds,
                  "ke_seconds": statistics.median(rounds["ke"]),
                  "metaschedule_seconds": statistics.median(rounds["metaschedule"])}
        result["ke_over_metaschedule"] = (result["metaschedule_seconds"]
                                          / result["ke_seconds"])
        results.append(result)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(results, f, indent=1)
    print("| problem | trials | ke µs [rounds] | MetaSchedule µs [rounds] | ke speedup | "
          "ke tuning s | MetaSchedule tuning s |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        def fmt(label):
            values = r["rounds"][label]
            return "%.1f [%.1f-%.1f]" % (statistics.median(values) * 1e6,
                                         min(values) * 1e6, max(values) * 1e6)
        peer_tuning = r["metaschedule_tuning_seconds"]
        peer_tuning = "n/a" if peer_tuning is None else "%.0f" % peer_tuning
        print(f"| {r['problem']} | {r['trials']} | {fmt('ke')} | {fmt('metaschedule')} | "
              f"{r['ke_over_metaschedule']:.2f} | {r['ke_tuning_seconds']:.0f} | "
              f"{peer_tuning} |")


if __name__ == "__main__":
    main()

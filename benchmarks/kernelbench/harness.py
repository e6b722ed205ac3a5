#!/usr/bin/env python3
"""KernelBench through ke: import, compile, check and time every problem.

Two steps, because torch-mlir (the importer) is too big to carry to the
GPU machines:

    # here, with build/venv (torch, torch-mlir, ke) and ke-opt:
    build/venv/bin/python benchmarks/kernelbench/harness.py prepare \\
        ../shared/kernelbench/level1 ../shared/kernelbench/level2 \\
        --out DIR --target cuda:sm_90 [--dtype bf16] [--scale 16]
    # where the target runs (the GPU machine: PyTorch and the ke package):
    python3 benchmarks/kernelbench/harness.py run DIR --problems PATHS...
    python3 benchmarks/kernelbench/harness.py report DIR

`prepare` imports each problem (ke.import_torch: weights as arguments,
training mode as KernelBench calls the model, the model on the meta
device so that no weight or input is materialised) and compiles it with
ke's default schedules, or the records of `--db` (a .so for CUDA, a saved
CPU model .kem for `--target cpu`). `run` builds each model for real,
optionally tunes it first (`--tune-trials N`, on the GPU), checks it with
KernelBench's protocol (protocol.py) and times it against eager PyTorch
and torch.compile. Every problem ends with one outcome, appended to
DIR/results.jsonl as soon as it is known (a run cut short keeps what it
has, and a rerun skips what is there): correct (with its times),
import-failed, unsupported-op (which op), compile-error, runtime-error,
wrong-result (max error) or timeout. `report` writes the metrics, the
table and the plot (report.py). `--scale N` shrinks the problems' sizes
for a CPU correctness run (problems.py says how); use the same value in
prepare and run.
"""

import argparse
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for path in (HERE, os.path.join(ROOT, "benchmarks", "gpu"),
             os.path.join(ROOT, "python-bindings")):
    if path not in sys.path:
        sys.path.insert(0, path)

from problems import Problem, find_problems  # noqa: E402
from worker import Worker  # noqa: E402

DTYPE_NAMES = ("fp32", "fp16", "bf16")


def _torch_dtype(torch, name):
    return {"fp32": None, "fp16": torch.float16,
            "bf16": torch.bfloat16}[name]


def _is_gpu(target):
    return target.startswith(("cuda:", "rocm:"))


def _artifact_suffix(target):
    return ".so" if _is_gpu(target) else ".kem"


def _first_error_line(text, limit=400):
    lines = [l for l in str(text).strip().splitlines() if l.strip()]
    if not lines:
        return ""
    line = next((l for l in lines if "error:" in l), lines[0])
    return line.strip()[:limit]


# --- prepare (in a worker process) ------------------------------------------

def _import(torch, ke, problem, namespace, dtype, target):
    """The problem's MLIR, rounded where eager PyTorch rounds on the
    target's kind of device: on the meta device first; a model that keeps
    plain tensors (not parameters or buffers) as attributes needs their
    values, so it is imported again on the CPU."""
    from problems import build_model, make_inputs
    errors = []
    for device in ("meta", "cpu"):
        try:
            model = build_model(torch, namespace, device, dtype)
            inputs = make_inputs(torch, namespace, 0, device, dtype)
            roundings = "gpu" if _is_gpu(target) else "cpu"
            return ke.import_torch(model, tuple(inputs), weights="arguments",
                                   training=True,
                                   roundings=roundings), device
        except ke.TorchImportError as error:
            if "ke cannot compile" in str(error):
                raise
            errors.append(error)
        except Exception as error:  # building the model or its inputs
            errors.append(error)
    raise errors[-1]


def prepare_task(task):
    import torch
    import ke
    problem = Problem(task["path"])
    base = os.path.join(task["out"], problem.slug)
    try:
        namespace = problem.load(task["scale"])
    except Exception as error:
        return {"outcome": "import-failed",
                "detail": "the problem file does not load at scale %d: %s" %
                (task["scale"], _first_error_line(error))}
    dtype = _torch_dtype(torch, task["dtype"])
    try:
        text, device = _import(torch, ke, problem, namespace, dtype,
                               task["target"])
    except ke.TorchImportError as error:
        message = str(error)
        unsupported = re.search(r"ke cannot compile '([^']+)'", message)
        if unsupported:
            return {"outcome": "unsupported-op", "op": unsupported.group(1),
                    "detail": _first_error_line(message)}
        if "dynamic shapes" in message:
            return {"outcome": "unsupported-op", "op": "dynamic shapes",
                    "detail": _first_error_line(message)}
        return {"outcome": "import-failed",
                "detail": _first_error_line(message)}
    except Exception as error:
        return {"outcome": "import-failed",
                "detail": "%s: %s" % (type(error).__name__,
                                      _first_error_line(error))}
    with open(base + ".mlir", "w") as f:
        f.write(text)
    artifact = base + _artifact_suffix(task["target"])
    try:
        compiled = ke.compile(text, target=task["target"], db=task["db"])
        compiled.save(artifact)
    except ke.KeError as error:
        return {"outcome": "compile-error",
                "detail": _first_error_line(error)}
    return {"outcome": "prepared", "imported_on": device,
            "artifact": os.path.basename(artifact)}


def prepare(args):
    os.makedirs(args.out, exist_ok=True)
    problems = find_problems(args.problems)
    meta = {"target": args.target, "dtype": args.dtype, "scale": args.scale,
            "db": args.db}
    with open(os.path.join(args.out, "prepare.json"), "w") as f:
        json.dump(meta, f, indent=1)
    worker = Worker(prepare_task, args.timeout)
    status_path = os.path.join(args.out, "prepare.jsonl")
    done = _read_jsonl(status_path) if args.resume else {}
    if not args.resume and os.path.exists(status_path):
        os.remove(status_path)
    try:
        for index, problem in enumerate(problems):
            if problem.name in done:
                continue
            result = worker.run({"path": problem.path, "out": args.out,
                                 "scale": args.scale, "dtype": args.dtype,
                                 "target": args.target, "db": args.db})
            result.update(name=problem.name, kind=problem.kind)
            _append_jsonl(status_path, result)
            print("[%d/%d] %s: %s %s" % (
                index + 1, len(problems), problem.name, result["outcome"],
                result.get("detail", "")[:160]), flush=True)
    finally:
        worker.close()


# --- run (in a worker process) ----------------------------------------------

def run_task(task):
    import torch
    import ke

    problem = Problem(task["path"])
    device = task["device"]
    dtype = _torch_dtype(torch, task["dtype"])
    namespace = problem.load(task["scale"])
    artifact = task["artifact"]
    tuned = None
    if task.get("tune_trials"):
        summary = ke.tune(task["mlir"], target=task["target"],
                          trials=task["tune_trials"], db=task["db"])
        compiled = ke.compile(task["mlir"], target=task["target"],
                              db=task["db"])
        artifact = artifact + ".tuned" + _artifact_suffix(task["target"])
        compiled.save(artifact)
        tuned = {"trials": task["tune_trials"],
                 "summary": summary if isinstance(summary, dict) else None}
    try:
        compiled = ke.load(artifact)
    except ke.KeError as error:
        return {"outcome": "runtime-error",
                "detail": "loading: " + _first_error_line(error)}
    try:
        return _check_and_time(torch, ke, task, problem, namespace, device,
                               dtype, compiled, tuned)
    finally:
        if hasattr(compiled, "release"):
            compiled.release()


def _check_and_time(torch, ke, task, problem, namespace, device, dtype,
                    compiled, tuned):
    from problems import build_model, make_inputs, tensor_inputs
    import protocol
    model = build_model(torch, namespace, device, dtype)
    weights = [w.detach() for w in ke.model_weights(model)]

    def candidate(*inputs):
        return compiled(*tensor_inputs(torch, inputs), *weights)

    result = protocol.check(torch, namespace, model, candidate, device,
                            task["dtype"], dtype, trials=task["trials"])
    if tuned:
        result["tuned"] = tuned
    if result["outcome"] != "correct" or not task["time"]:
        return result

    inputs = make_inputs(torch, namespace, protocol.TIMING_SEED, device,
                         dtype)
    flush = None
    if device == "cuda":
        import run as gpu_run
        flush = gpu_run.make_flush(torch)
    times = {}
    with torch.no_grad():
        times["ke"], runs = protocol.time_call(
            torch, lambda: candidate(*inputs), device, flush, task["runs"],
            task["max_seconds"])
        times["eager"], _ = protocol.time_call(
            torch, lambda: model(*inputs), device, flush, task["runs"],
            task["max_seconds"])
        for mode in task["compile_modes"]:
            try:
                compiled_model = torch.compile(model, mode=mode)
                compiled_model(*inputs)
                times["compile:" + mode], _ = protocol.time_call(
                    torch, lambda: compiled_model(*inputs), device, flush,
                    task["runs"], task["max_seconds"])
            except Exception as error:  # a baseline that fails is noted
                result.setdefault("baseline_errors", {})[mode] = (
                    _first_error_line(error, 200))
        result["runs"] = runs
        speedup = times["eager"] / times["ke"]
        ke_wall = protocol.wall_per_call(torch, lambda: candidate(*inputs),
                                         device)
        eager_wall = protocol.wall_per_call(torch, lambda: model(*inputs),
                                            device)
        result["wall"] = {"ke": ke_wall, "eager": eager_wall}
        if speedup > 1.5 * (eager_wall / ke_wall) and speedup > 1.0:
            result["flags"] = result.get("flags", []) + ["hidden_work"]
        if max([speedup] + [t / times["ke"] for k, t in times.items()
                            if k.startswith("compile:")]) > \
                protocol.SUSPICIOUS:
            recheck = protocol.check(
                torch, namespace, model, candidate, device, task["dtype"],
                dtype, trials=2 * task["trials"],
                first_seed=protocol.RECHECK_SEED)
            if recheck["outcome"] != "correct":
                recheck["detail"] = "re-check of a speedup above %gx: %s" % (
                    protocol.SUSPICIOUS, recheck.get("detail", ""))
                return recheck
            times["ke"], runs = protocol.time_call(
                torch, lambda: candidate(*inputs), device, flush,
                3 * task["runs"], 3 * task["max_seconds"])
            times["eager"], _ = protocol.time_call(
                torch, lambda: model(*inputs), device, flush, 3 * task["runs"],
                3 * task["max_seconds"])
            result["flags"] = result.get("flags", []) + ["rechecked"]
    result["times"] = times
    return result


def run(args):
    with open(os.path.join(args.dir, "prepare.json")) as f:
        meta = json.load(f)
    prepared = _read_jsonl(os.path.join(args.dir, "prepare.jsonl"))
    by_name = {p.name: p for p in find_problems(args.problems)}
    results_path = os.path.join(args.dir, "results.jsonl")
    done = _read_jsonl(results_path) if args.resume else {}
    if not args.resume and os.path.exists(results_path):
        os.remove(results_path)
    device = "cuda" if meta["target"].startswith("cuda:") else "cpu"
    worker = Worker(run_task, args.timeout)
    names = [n for n in prepared if n in by_name] if args.problems else \
        list(prepared)
    started = time.monotonic()
    try:
        for index, name in enumerate(names):
            if name in done:
                continue
            if args.deadline and time.monotonic() - started > args.deadline:
                # Left for a later `run --resume`; not an outcome.
                print("deadline of %d s reached: %d problems left for "
                      "--resume" % (args.deadline,
                                    sum(n not in done for n in names[index:])),
                      flush=True)
                break
            status = prepared[name]
            problem = by_name.get(name)
            if status["outcome"] != "prepared":
                result = dict(status)
            elif problem is None:
                result = {"outcome": "runtime-error",
                          "detail": "problem file not given (--problems)"}
            else:
                base = os.path.join(args.dir, problem.slug)
                result = worker.run({
                    "path": problem.path, "scale": meta["scale"],
                    "dtype": meta["dtype"], "device": device,
                    "target": meta["target"],
                    "artifact": os.path.join(args.dir, status["artifact"]),
                    "mlir": base + ".mlir", "db": args.db,
                    "tune_trials": args.tune_trials, "trials": args.trials,
                    "time": not args.no_timing, "runs": args.runs,
                    "max_seconds": args.max_seconds,
                    "compile_modes": args.compile_modes})
                if device == "cuda":
                    # A fresh process for every problem on the GPU: one
                    # problem's memory (PyTorch's cache, a sticky CUDA
                    # error) cannot fail the next.
                    worker.close()
            result.update(name=name, kind=status.get("kind"),
                          dtype=meta["dtype"])
            _append_jsonl(results_path, result)
            _print_result(index, len(names), result)
    finally:
        worker.close()


def _print_result(index, total, result):
    line = "[%d/%d] %s: %s" % (index + 1, total, result["name"],
                               result["outcome"])
    times = result.get("times")
    if times:
        line += "  ke %.1f us, eager %.1f us (%.2fx)" % (
            times["ke"] * 1e6, times["eager"] * 1e6,
            times["eager"] / times["ke"])
        for key, value in times.items():
            if key.startswith("compile:"):
                line += ", %s %.2fx" % (key, value / times["ke"])
    elif result.get("detail"):
        line += "  " + result["detail"][:160]
    print(line, flush=True)


# --- files ------------------------------------------------------------------

def _read_jsonl(path):
    """name -> last record of a JSON-lines file (a torn last line from a
    killed run is ignored)."""
    records = {}
    if not os.path.exists(path):
        return records
    with open(path) as f:
        for line in f:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            records[record["name"]] = record
    return records


def _append_jsonl(path, record):
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="import and compile problems")
    p.add_argument("problems", nargs="+", help="problem files or folders")
    p.add_argument("--out", required=True)
    p.add_argument("--target", default="cpu")
    p.add_argument("--dtype", choices=DTYPE_NAMES, default="fp32")
    p.add_argument("--scale", type=int, default=1)
    p.add_argument("--db", help="tuning database for compiling")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--resume", action="store_true")
    r = sub.add_parser("run", help="check and time prepared problems")
    r.add_argument("dir")
    r.add_argument("--problems", nargs="+", required=True,
                   help="the problem files or folders given to prepare")
    r.add_argument("--trials", type=int, default=5,
                   help="correctness trials (KernelBench: 5)")
    r.add_argument("--runs", type=int, default=100,
                   help="timed runs per side (KernelBench: 100)")
    r.add_argument("--max-seconds", type=float, default=2.0,
                   help="timing stops after this many seconds per side")
    r.add_argument("--no-timing", action="store_true")
    r.add_argument("--compile-modes", nargs="*", default=["default"],
                   help="torch.compile modes to time (none: skip)")
    r.add_argument("--tune-trials", type=int, default=0,
                   help="tune each problem first (needs the GPU)")
    r.add_argument("--db", help="tuning database (tuning and compiling)")
    r.add_argument("--timeout", type=int, default=600)
    r.add_argument("--resume", action="store_true")
    r.add_argument("--deadline", type=float, default=0,
                   help="start no problem after this many seconds (the "
                        "rest is left for --resume; 0: no deadline)")
    s = sub.add_parser("report", help="metrics, table and plot")
    s.add_argument("dirs", nargs="+")
    s.add_argument("--out", help="folder for the report (default: first dir)")
    args = parser.parse_args(argv)
    if args.command == "prepare":
        prepare(args)
    elif args.command == "run":
        if args.compile_modes == ["none"]:
            args.compile_modes = []
        run(args)
    else:
        import report
        report.main(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""PyTorch modules imported by ke, compiled for a CUDA GPU into one shared
library each, and checked and timed against eager PyTorch on the GPU.

The modules are the ones ke's Python tests compile for the CPU
(python-bindings/tests/zoo.py). Two steps, because torch-mlir (the
importer) is too big to carry to the GPU machine:

    # here, with build/venv (torch, torch-mlir) and ke-opt:
    build/venv/bin/python benchmarks/gpu/torch_models.py prepare DIR --target cuda:sm_90
    # on the GPU machine, with DIR carried (PyTorch only, no LLVM):
    python3 benchmarks/gpu/torch_models.py check DIR

`prepare` seeds each module and its inputs, imports it (ke.import_torch, eval
mode, weights inlined), compiles it (ke.compile, default schedules or
`--db`), and saves DIR/NAME.so with DIR/NAME.mlir and DIR/NAME.pt (the
module's state and inputs); a module that does not import or compile gets
DIR/NAME.error. `check --trials N` first tunes each DIR/NAME.mlir on the GPU
(the carried static ke-opt, build/package) and compiles it with the records
there (ke-opt links the library itself).
`check` rebuilds each module with its state, runs the library on CUDA
tensors (ke.load) and eager PyTorch (TF32 off) on the same inputs, compares
them by relative L2 error (ke's tolerances) and times both as run.py does
(CUDA events around the call, L2 flushed by reading a buffer twice its
size, median); with `--graphs` each side is captured once in a CUDA graph
and the replays are timed, which leaves out Python's dispatch of every op.
Writes $OUT/torch-models.md and .json.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python-bindings"))
sys.path.insert(0, os.path.join(ROOT, "python-bindings", "tests"))


def prepare(args):
    import torch
    import ke
    from zoo import MODELS
    os.makedirs(args.dir, exist_ok=True)
    for name in sorted(MODELS):
        torch.manual_seed(0)
        model, inputs = MODELS[name]()
        model.eval()
        base = os.path.join(args.dir, name)
        try:
            text = ke.import_torch(model, inputs)
            with open(base + ".mlir", "w") as f:
                f.write(text)
            compiled = ke.compile(text, target=args.target, db=args.db)
            compiled.save(base + ".so")
            torch.save({"state": model.state_dict(), "inputs": inputs},
                       base + ".pt")
            print(f"{name}: {base}.so")
        except ke.KeError as error:
            lines = str(error).strip().splitlines()
            first = next((l for l in lines if "error:" in l), lines[0])[:300]
            with open(base + ".error", "w") as f:
                f.write(first + "\n")
            print(f"{name}: {first}")


def graphed(torch, call):
    """`call` captured once in a CUDA graph (after a warm-up outside it,
    which loads ke's device code): replaying it is one launch from the
    host, so the events time the GPU's work, not Python's dispatch of each
    op. The same for ke and PyTorch."""
    call()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    return graph.replay


def check(args):
    import torch
    import ke
    from zoo import MODELS
    sys.path.insert(0, HERE)
    import run as bench
    from models import relative_error, write_table
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tolerance = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 3e-2}
    flush = bench.make_flush(torch)
    ke_opt = None
    if args.trials:
        import tempfile
        ke_opt = bench.find_ke_opt(None, tempfile.mkdtemp(prefix="ke-opt-"))
        bench.use_carried_openmp()
        major, minor = torch.cuda.get_device_capability()
        target = f"cuda:sm_{major}{minor}"
    device = torch.cuda.get_device_name()
    rows = []
    for name in sorted(MODELS):
        base = os.path.join(args.dir, name)
        row = {"model": name}
        rows.append(row)
        if os.path.exists(base + ".error"):
            row["error"] = open(base + ".error").read().strip()
            continue
        try:
            torch.manual_seed(0)
            model, _ = MODELS[name]()
            saved = torch.load(base + ".pt")
            model.load_state_dict(saved["state"])
            model = model.cuda().eval()
            inputs = [t.cuda().contiguous() for t in saved["inputs"]]
            library = base + ".so"
            if ke_opt:
                # Tuned here, on this GPU, then compiled with the records.
                tuned = os.path.join(os.environ.get("OUT", "."), name + ".tuned.so")
                db = os.path.join(os.environ.get("OUT", "."), name + ".db")
                for command in (
                        [ke_opt, "tune", base + ".mlir", "--target", target,
                         "--trials", str(args.trials), "--db", db, "--no-progress"],
                        [ke_opt, "compile", base + ".mlir", "--target", target,
                         "--db", db, "-o", tuned]):
                    code, _, err = bench.run_ke(command, 900)
                    if code != 0:
                        raise RuntimeError(f"{command[1]} failed: {err[-300:]}")
                library = tuned
            compiled = ke.load(library)
            with torch.no_grad():
                expected = model(*inputs)
                actual = compiled(*inputs)
            torch.cuda.synchronize()
            if isinstance(expected, torch.Tensor):
                expected, actual = (expected,), (actual,)
            errors = [relative_error(torch, a, e)
                      for a, e in zip(actual, expected)]
            row["relative_error"] = max(errors)
            row["correct"] = all(err <= tolerance[e.dtype]
                                 for err, e in zip(errors, expected))
            with torch.no_grad():
                ke_call = lambda: compiled(*inputs)  # noqa: E731
                torch_call = lambda: model(*inputs)  # noqa: E731
                if args.graphs:
                    ke_call, torch_call = graphed(torch, ke_call), graphed(torch, torch_call)
                ke_s, _ = bench.time_cuda([ke_call], flush, torch)
                torch_s, _ = bench.time_cuda([torch_call], flush, torch)
            row.update(ke_us=ke_s * 1e6, torch_us=torch_s * 1e6,
                       speedup=torch_s / ke_s)
        except Exception as error:  # reported in the row; the run goes on
            row["error"] = str(error)[:300]
    schedules = (f"tuned here, {args.trials} trials per workload" if args.trials
                 else "default schedules")
    if args.graphs:
        schedules += "; both sides replayed from CUDA graphs"
    lines = write_table(os.environ.get("OUT", "."), "torch-models",
                        f"Device: {device}; PyTorch {torch.__version__}; "
                        f"{schedules}.", rows, error_width=140)
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("dir")
    p.add_argument("--target", default="cuda:sm_90")
    p.add_argument("--db")
    c = sub.add_parser("check")
    c.add_argument("dir")
    c.add_argument("--graphs", action="store_true",
                   help="time CUDA graph replays of both (no host dispatch "
                        "per op)")
    c.add_argument("--trials", type=int, default=0,
                   help="tune each module on this GPU first (ke-opt from "
                        "build/package) and run the tuned library")
    args = parser.parse_args()
    (prepare if args.step == "prepare" else check)(args)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Whole models compiled by ke into one shared library, run from PyTorch on
this machine's NVIDIA GPU, checked and timed against eager PyTorch.

For every model below (an MLIR file in the shapes torch-mlir imports, and
the same computation written in PyTorch):

1. optionally `ke-opt tune MODEL --target cuda:sm_XY --trials N --db DB`;
2. `ke-opt compile MODEL --target cuda:sm_XY [--db DB] -o MODEL.so`: every
   kernel group with its best record (or the default schedule) and the glue
   between them (ke-c/ke_model.h);
3. the library loaded with ke.load (python-bindings: ctypes over
   ke_model_run) and called on CUDA tensors, on PyTorch's current stream,
   its outputs compared with PyTorch's by
   relative L2 error (ke's tolerances, per model below);
4. both timed as benchmarks/gpu/run.py times ops (CUDA events around the
   call only, L2 flushed by reading a buffer twice its size before each run,
   median), PyTorch eager with TF32 off.

Writes $OUT/models.md and models.json (or --out). A model that fails is
reported in its row and the run goes on.

    python3 benchmarks/gpu/models.py --trials 40
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python-bindings"))
import run as bench  # noqa: E402  (find_ke_opt, make_flush, time_cuda, ...)
import ke  # noqa: E402  (ke.load: the model library on CUDA tensors)


def gelu_tanh(torch, a):
    return 0.5 * a * (1 + torch.tanh(0.7978845608 * (a + 0.044715 * a * a * a)))


def models(torch):
    """(name, MLIR path, input shapes and dtypes, PyTorch function, relative
    L2 tolerance: ke's for the model's narrowest type, 1e-4 for f32 and 1e-2
    where a bf16 value is computed inside)."""
    f32, bf16 = torch.float32, torch.bfloat16
    return [
        ("linear_relu", os.path.join(ROOT, "test/Inputs/linear-relu.mlir"),
         [((64, 128), f32), ((256, 128), f32), ((256,), f32)],
         lambda x, w, b: torch.relu(x @ w.T + b), 1e-4),
        ("mlp", os.path.join(ROOT, "examples/mlp.mlir"),
         [((64, 512), f32), ((512, 1024), f32), ((1024,), f32),
          ((1024, 256), f32)],
         lambda x, w1, b1, w2: torch.softmax(gelu_tanh(torch, x @ w1 + b1) @ w2,
                                             dim=1), 1e-4),
        ("attention", os.path.join(ROOT, "examples/attention.mlir"),
         [((8, 128, 64), bf16), ((8, 64, 128), bf16), ((8, 128, 64), bf16)],
         lambda q, kt, v: torch.bmm(
             torch.softmax(torch.bmm(q.float(), kt.float()) * 0.125, dim=2)
             .to(bf16).float(), v.float()), 1e-2),
        # torch.cat between kernel groups: box copies (cuMemcpy3D).
        ("concat_relu", os.path.join(ROOT, "test/Inputs/concat-model.mlir"),
         [((4, 8), f32)],
         lambda x: torch.relu(torch.cat([x, x], dim=1)), 1e-4),
    ]


def gemm_models(torch):
    """Tensor-core GEMMs (`--gemms`): on sm_90a targets their tiles are
    loaded by TMA, whose tensor maps the model runtime encodes at each call.
    Partial tiles (4000 x 3000 x 2000), a batch, split K, B stored N x K
    with a fused bias + exact GELU to bf16."""
    bf16 = torch.bfloat16
    problems = os.path.join(HERE, "problems")
    f32 = lambda a: a.float()  # noqa: E731
    return [
        ("matmul_bf16_partial",
         os.path.join(problems, "matmul_bf16_4000x3000x2000.mlir"),
         [((4000, 2000), bf16), ((2000, 3000), bf16)],
         lambda a, b: f32(a) @ f32(b), 1e-4),
        ("bmm_bf16", os.path.join(problems, "bmm_bf16_32x1024x1024x128.mlir"),
         [((32, 1024, 128), bf16), ((32, 128, 1024), bf16)],
         lambda a, b: torch.bmm(f32(a), f32(b)), 1e-4),
        ("matmul_bf16_split_k",
         os.path.join(problems, "matmul_bf16_256x256x131072.mlir"),
         [((256, 131072), bf16), ((131072, 256), bf16)],
         lambda a, b: f32(a) @ f32(b), 1e-4),
        ("mlp_bf16", os.path.join(problems, "mlp_bf16_4096x4096x16384.mlir"),
         [((4096, 4096), bf16), ((16384, 4096), bf16), ((16384,), bf16)],
         lambda x, w, b: torch.nn.functional.gelu(f32(x) @ f32(w).T + f32(b))
         .to(bf16), 1e-2),
    ]


def relative_error(torch, actual, expected):
    actual, expected = actual.double(), expected.double()
    norm = torch.linalg.vector_norm(expected).item()
    diff = torch.linalg.vector_norm(actual - expected).item()
    return diff / norm if norm else diff


def write_table(out_dir, stem, caption, rows, error_width=120):
    """Writes `rows` (dicts with model, relative_error, correct, ke_us,
    torch_us, speedup, or error) as OUT_DIR/STEM.md under `caption`, and
    as STEM.json; returns the Markdown lines. Shared with torch_models.py."""
    lines = [caption, "",
             "| model | correct | max rel. error | ke µs | PyTorch eager µs | vs PyTorch | notes |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | no | | | | | {r['error'][:error_width]} |")
        else:
            lines.append(f"| {r['model']} | {'yes' if r['correct'] else 'NO'} | "
                         f"{r['relative_error']:.1e} | {r['ke_us']:.1f} | "
                         f"{r['torch_us']:.1f} | {r['speedup']:.2f} | |")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, stem + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out_dir, stem + ".json"), "w") as f:
        json.dump({"caption": caption, "rows": rows}, f, indent=1)
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ke-opt")
    parser.add_argument("--trials", type=int, default=0,
                        help="tune each model first (0: default schedules)")
    parser.add_argument("--only", default="")
    parser.add_argument("--target", help="ke's target (default: cuda:sm_XY "
                        "of the device)")
    parser.add_argument("--gemms", action="store_true",
                        help="the tensor-core GEMMs instead of the models")
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    args = parser.parse_args()
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    work = tempfile.mkdtemp(prefix="ke-models-")
    ke_opt = bench.find_ke_opt(args.ke_opt, work)
    bench.use_carried_openmp()
    major, minor = torch.cuda.get_device_capability()
    target = args.target or f"cuda:sm_{major}{minor}"
    flush = bench.make_flush(torch)
    device = torch.cuda.get_device_name()
    rows = []
    chosen = gemm_models(torch) if args.gemms else models(torch)
    for name, path, shapes, reference, tolerance in chosen:
        if args.only and name not in args.only.split(","):
            continue
        row = {"model": name, "target": target}
        rows.append(row)
        db = os.path.join(work, name + ".db")
        library = os.path.join(work, name + ".so")
        try:
            if args.trials:
                bench.log(f"{name}: tuning ({args.trials} trials per workload)")
                code, out, err = bench.run_ke(
                    [ke_opt, "tune", path, "--target", target, "--trials",
                     str(args.trials), "--db", db, "--no-progress"], 3000)
                if code != 0:
                    raise RuntimeError(f"tune failed ({code}): {err[-500:]}")
            compile_cmd = [ke_opt, "compile", path, "--target", target, "-o",
                           library] + (["--db", db] if args.trials else [])
            code, out, err = bench.run_ke(compile_cmd, 600)
            if code != 0:
                raise RuntimeError(f"compile failed ({code}): {err[-800:]}")
            row["tuned"] = "applied tuned schedule" in err
            model = ke.load(library)
            g = torch.Generator(device="cuda").manual_seed(7)
            inputs = [(torch.rand(s, generator=g, device="cuda") * 2 - 1).to(d)
                      for s, d in shapes]
            expected = reference(*inputs)
            actual = model(*inputs)
            torch.cuda.synchronize()
            row["relative_error"] = relative_error(torch, actual, expected)
            row["tolerance"] = tolerance
            row["correct"] = row["relative_error"] <= tolerance
            ke_s, _ = bench.time_cuda([lambda: model(*inputs)], flush, torch)
            torch_s, _ = bench.time_cuda([lambda: reference(*inputs)], flush, torch)
            row.update(ke_us=ke_s * 1e6, torch_us=torch_s * 1e6,
                       speedup=torch_s / ke_s)
            bench.log(f"{name}: error {row['relative_error']:.1e}, ke "
                      f"{ke_s * 1e6:.1f} us, PyTorch {torch_s * 1e6:.1f} us")
        except Exception as error:  # reported in the row; the run goes on
            row["error"] = str(error)
            bench.log(f"{name}: {error}")
    schedules = (f"tuned, {args.trials} trials per workload" if args.trials
                 else "default schedules")
    lines = write_table(args.out, "models",
                        f"Device: {device}; ke target {target}; PyTorch "
                        f"{torch.__version__}; {schedules}.", rows)
    print("\n".join(lines))
    return 0 if all(r.get("correct") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

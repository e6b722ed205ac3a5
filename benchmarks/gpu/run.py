#!/usr/bin/env python3
"""ke against PyTorch on this machine's NVIDIA GPU, as ratios measured in one run.

Runs on the GPU machine (CUDA driver, PyTorch; no LLVM needed) with the static
ke-opt carried there (build/package/ke-opt.xz, unpacked on first use). For
every problem of the kernel suite (benchmarks/suite/full, or --small), or of
another folder (--dir benchmarks/realistic/full: shapes from real models,
each file naming its PyTorch equivalent in `// torch:` lines):

1. `ke-opt tune FILE --target cuda:sm_XY` (--trials, --explore): every
   candidate is lowered, run on the GPU in a child process, checked against
   the device reference (the unscheduled kernel as plain loops, accumulating
   in f64: docs/measurement.md; relative L2 error within the dtype's
   tolerance) and timed (CUDA events, L2 flushed by reading a buffer
   twice its size, inputs rotated, median). The problem's ke time is the sum
   of its kernels' best times (fills and consumers fused into another kernel
   are part of that kernel).
2. The same computation in PyTorch (same shapes and dtypes, TF32 off unless
   --allow-tf32 (then on for ke and PyTorch alike), eager,
   its own best layout prepared outside the timing), timed the same way:
   CUDA events around the op only, L2 flushed the same way between runs,
   median.
3. Once per run: the device-to-device copy bandwidth (bytes read + written
   over time, a 1 GiB copy timed the same way), against which memory-bound
   problems are reported.

The L2 flush reads a buffer twice the L2 size (ke's runner: a small PTX
kernel; here: torch.sum), so the L2 holds clean lines the timed op drops for
free. A memset flush would leave dirty lines that the timed op pays to write
back (benchmarks/gpu/flush_probe.py shows the difference; docs/measurement.md).

A failure (tuning error, timeout, no PyTorch equivalent, out of memory) is
reported in the problem's row and the run goes on. Results are written
after every problem, so a run cut short still leaves its table:
$OUT/gpu-results.md (Markdown for docs/results.md) and
$OUT/gpu-results.json (everything, mergeable: --merge).

    python3 benchmarks/gpu/run.py --trials 20 --explore 10
    python3 benchmarks/gpu/run.py --smoke            # 3 small problems, fast
    python3 benchmarks/gpu/run.py --part 1/2 ...     # half the suite
    python3 benchmarks/gpu/run.py --report-only --merge a.json b.json \\
        --results docs/results.md                    # no GPU needed
"""
import argparse
import datetime
import glob
import json
import lzma
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from results_md import replace_section  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUITE = os.path.join(ROOT, "benchmarks", "suite")
START = time.time()
# flop per byte below which a problem is reported against the copy bandwidth
# (an H100's fp32 ridge point is about 20).
MEMORY_BOUND_INTENSITY = 20.0


def log(message):
    print(f"[gpu-bench] {message}", file=sys.stderr, flush=True)


# --- ke-opt ------------------------------------------------------------------

def find_ke_opt(explicit, workdir):
    """The ke-opt to run: --ke-opt, else build/package/ke-opt, else
    build/package/ke-opt.xz unpacked into `workdir`, else build/tools."""
    candidates = [explicit] if explicit else [
        os.path.join(ROOT, "build", "package", "ke-opt"),
        os.path.join(ROOT, "build", "package", "ke-opt.xz"),
        os.path.join(ROOT, "build", "tools", "ke-opt", "ke-opt")]
    for path in candidates:
        if not path or not os.path.exists(path):
            continue
        if path.endswith(".xz"):
            os.makedirs(workdir, exist_ok=True)
            target = os.path.join(workdir, "ke-opt")
            if not os.path.exists(target):
                log(f"unpacking {path}")
                with lzma.open(path) as src, open(target + ".tmp", "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.chmod(target + ".tmp", 0o755)
                os.replace(target + ".tmp", target)
            path = target
        return path
    sys.exit("gpu-bench: no ke-opt: build it with `bash scripts/build.sh "
             "package-ke-opt` and carry build/package, or pass --ke-opt")


def use_carried_openmp():
    """The GPU machines have no LLVM: with LLVM's libomp carried beside
    ke-opt (build/package/libomp.so.5), the CPU reference that checks every
    GPU candidate runs its parallel loops on all cores instead of one."""
    carried = os.path.join(ROOT, "build", "package", "libomp.so.5")
    if "KE_LIBOMP" not in os.environ and os.path.exists(carried):
        os.environ["KE_LIBOMP"] = carried
        log(f"CPU reference threads: {carried}")


def parse_tuning_args(parser, workdir):
    """The options every tuning-throughput benchmark takes (--seed, --ke-opt,
    --workdir, --out), parsed; then the work folder made, the carried
    ke-opt found and LLVM's libomp put to use. (args, ke-opt path)."""
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ke-opt")
    parser.add_argument("--workdir", default=os.path.join(ROOT, "build", workdir))
    parser.add_argument("--out", help="write the results as JSON here too")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    ke_opt = find_ke_opt(args.ke_opt, args.workdir)
    use_carried_openmp()
    return args, ke_opt


def run_json(cmd, env=None):
    """The JSON that `cmd` prints; exits with its stderr when it fails."""
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout)


def run_ke(cmd, timeout):
    """(returncode or 'timeout', stdout, stderr). ke-opt runs in a session of
    its own, so that a timeout kills its candidate children too (one may be
    stuck in a hung kernel)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=max(timeout, 1))
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        return "timeout", out or "", err or ""


def pick_target(ke_opt, capability):
    """cuda:sm_XYa for a Hopper device (its architecture-specific
    instructions: wgmma), else cuda:sm_XY when ke knows it, else the newest
    ke target the device runs (PTX is forward compatible)."""
    major, minor = capability
    chips = [f"sm_{major}{minor}", "sm_90", "sm_80", "sm_70"]
    if (major, minor) == (9, 0):
        chips.insert(0, "sm_90a")
    for chip in chips:
        if int(chip[3:5]) > major * 10 + minor:
            continue
        code, _, _ = run_ke([ke_opt, "target", "cuda:" + chip], 60)
        if code == 0:
            return "cuda:" + chip
    sys.exit(f"gpu-bench: ke knows no CUDA target for compute capability {major}.{minor}")


# --- problems ----------------------------------------------------------------

TENSOR = re.compile(r"tensor<((?:\d+x)*)(\w+)>")


def parse_tensor(text):
    m = TENSOR.fullmatch(text.strip())
    if not m:
        raise ValueError(f"not a static tensor type: {text}")
    dims = [int(d) for d in m.group(1).split("x") if d]
    return dims, m.group(2)


def parse_signature(path):
    """Arguments [(shape, dtype)] and result (shape, dtype) of the suite file's function."""
    text = open(path).read()
    m = re.search(r"func\.func @\w+\((.*?)\)\s*->\s*(tensor<[^>]*>)", text, re.S)
    if not m:
        raise ValueError(f"{path}: no function signature")
    args = [parse_tensor(t) for t in re.findall(r"%\w+\s*:\s*(tensor<[^>]*>)", m.group(1))]
    return args, parse_tensor(m.group(2))


DTYPE_BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i8": 1}


def nbytes(shape, dtype):
    n = DTYPE_BYTES.get(dtype, 4)
    for d in shape:
        n *= d
    return n


def file_torch_lines(path):
    """The problem file's own PyTorch equivalent: its `// torch:` lines
    (benchmarks/realistic/generate.py says what they hold), or []."""
    prefix = "// torch:"
    with open(path) as f:
        return [line[len(prefix):].strip() for line in f if line.startswith(prefix)]


def torch_op_from_lines(lines, tensors, torch):
    """Runs every line but the last once (layout changes, outside the
    timing) and returns the last one's callable."""
    scope = {"t": tensors, "torch": torch, "F": torch.nn.functional}
    for statement in lines[:-1]:
        exec(statement, scope)
    return eval(lines[-1], scope)


def torch_op(name, tensors, torch, path=None):
    """A callable running problem `name` in PyTorch on `tensors` (ke's layouts
    and argument order); layout changes happen here, outside any timing.
    A file with `// torch:` lines says it itself. None when there is no
    equivalent."""
    lines = file_torch_lines(path) if path else []
    if lines:
        return torch_op_from_lines(lines, tensors, torch)
    F = torch.nn.functional
    cl, cl3 = torch.channels_last, torch.channels_last_3d
    t = tensors
    if name in ("matmul_square", "matmul_rect", "matmul_irregular", "matmul_4096",
                "matmul_f32_4096"):
        return lambda: torch.mm(t[0], t[1])
    if name == "matmul_transposed_b":
        bt = t[1].t()  # B is N x K: a transposed view, as cuBLAS takes it
        return lambda: torch.mm(t[0], bt)
    if re.fullmatch(r"bmm_(bf16|f16)_[0-9x]+", name):
        # 16-bit batch matmul, f32 result
        try:
            torch.bmm(t[0], t[1], out_dtype=torch.float32)
            return lambda: torch.bmm(t[0], t[1], out_dtype=torch.float32)
        except (TypeError, RuntimeError):
            return lambda: torch.bmm(t[0], t[1]).float()
    if re.fullmatch(r"matmul_tb_(bf16|f16)_\d+", name):
        # 16-bit inputs, B stored N x K (a transposed view for cuBLAS), f32
        # result
        bt = t[1].t()
        return lambda: torch.mm(t[0], bt, out_dtype=torch.float32)
    if re.fullmatch(r"matmul_tb_f32_\d+", name):
        bt = t[1].t()
        return lambda: torch.mm(t[0], bt)
    if re.fullmatch(r"mlp_(bf16|f16)_[0-9x]+", name):
        # nn.Linear (weight N x K) + bias, then exact GELU: cuBLAS (bias in
        # its epilogue) and a separate GELU kernel
        return lambda: F.gelu(F.linear(t[0], t[1], t[2]))
    if name == "matmul_bf16" or re.fullmatch(r"matmul_(bf16|f16)_[0-9x]+", name):
        # 16-bit inputs, f32 result
        try:
            torch.mm(t[0], t[1], out_dtype=torch.float32)
            return lambda: torch.mm(t[0], t[1], out_dtype=torch.float32)
        except (TypeError, RuntimeError):
            return lambda: torch.mm(t[0], t[1]).float()
    if name == "batch_matmul":
        return lambda: torch.bmm(t[0], t[1])
    if name == "matvec":
        return lambda: torch.mv(t[0], t[1])
    if name == "conv1d_nwc":  # NWC x WCF -> NCW x FCW
        x = t[0].permute(0, 2, 1).contiguous()
        w = t[1].permute(2, 1, 0).contiguous()
        return lambda: F.conv1d(x, w)
    if name in ("conv2d_nhwc", "conv2d_dilated", "conv2d_pointwise"):
        x = t[0].permute(0, 3, 1, 2)  # NHWC memory: channels_last NCHW
        w = t[1].permute(3, 2, 0, 1).contiguous(memory_format=cl)
        dilation = 2 if name == "conv2d_dilated" else 1
        return lambda: F.conv2d(x, w, dilation=dilation)
    if re.fullmatch(r"conv2d_nhwc_(bf16|f16)_[0-9x_]+", name):
        # 16-bit NHWC x HWCF, 16-bit result: cuDNN on the same (padded)
        # input, channels_last, no padding of its own
        x = t[0].permute(0, 3, 1, 2)
        w = t[1].permute(3, 2, 0, 1).contiguous(memory_format=cl)
        return lambda: F.conv2d(x, w)
    if name == "conv2d_nchw_strided":
        return lambda: F.conv2d(t[0], t[1], stride=2)
    if name == "conv2d_depthwise":
        x = t[0].permute(0, 3, 1, 2)
        channels = x.shape[1]
        w = t[1].permute(2, 0, 1).unsqueeze(1).contiguous(memory_format=cl)
        return lambda: F.conv2d(x, w, groups=channels)
    if name == "conv3d":
        x = t[0].permute(0, 4, 1, 2, 3)  # NDHWC memory: channels_last_3d
        w = t[1].permute(4, 3, 0, 1, 2).contiguous(memory_format=cl3)
        return lambda: F.conv3d(x, w)
    if name == "maxpool":
        x = t[0].permute(0, 3, 1, 2)
        return lambda: F.max_pool2d(x, 2, 2)
    if name == "avgpool":
        x = t[0].permute(0, 3, 1, 2)
        return lambda: F.avg_pool2d(x, 2, 2)
    if name == "reduce_sum":
        return lambda: t[0].sum(1)
    if name == "reduce_mean":
        return lambda: t[0].mean(1)
    if name == "reduce_max":
        return lambda: t[0].amax(1)
    if name == "reduce_global_sum":
        return lambda: t[0].sum()
    if name == "argmax":
        return lambda: t[0].argmax(1)
    if name in ("softmax", "softmax_f16"):
        return lambda: torch.softmax(t[0], 1)
    if name == "log_softmax":
        return lambda: torch.log_softmax(t[0], 1)
    if name == "layernorm":
        return lambda: F.layer_norm(t[0], (t[0].shape[1],), t[1], t[2], 1e-5)
    if name == "rmsnorm":
        if hasattr(F, "rms_norm"):
            return lambda: F.rms_norm(t[0], (t[0].shape[1],), t[1], 1e-5)
        return lambda: t[0] * torch.rsqrt(t[0].pow(2).mean(1, keepdim=True) + 1e-5) * t[1]
    # Activation chains: the activation, then x * 2 + 1 (eager: one kernel each).
    if name == "relu_chain":
        return lambda: torch.relu(t[0]).mul_(2).add_(1)
    if name in ("gelu_chain", "gelu_chain_bf16"):
        return lambda: F.gelu(t[0], approximate="tanh").mul_(2).add_(1)
    if name == "sigmoid_chain":
        return lambda: torch.sigmoid(t[0]).mul_(2).add_(1)
    if name == "tanh_chain":
        return lambda: torch.tanh(t[0]).mul_(2).add_(1)
    return None


def random_inputs(args, torch, seed):
    """Seeded values in +-[0.1, 1] like ke's, in each argument's dtype."""
    dtypes = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
              "f64": torch.float64}
    g = torch.Generator(device="cuda").manual_seed(seed)
    out = []
    for shape, dtype in args:
        if dtype not in dtypes:
            raise ValueError(f"no PyTorch inputs for element type {dtype}")
        mag = torch.rand(shape, generator=g, device="cuda") * 0.9 + 0.1
        sign = torch.randint(0, 2, shape, generator=g, device="cuda") * 2 - 1
        out.append((mag * sign).to(dtypes[dtype]))
    return out


def make_flush(torch):
    """The L2 flush buffer: twice the L2, zeroed once."""
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or (50 << 20)
    return torch.zeros(2 * l2 // 4, dtype=torch.float32, device="cuda")


def time_cuda(fns, flush, torch, min_total=0.05, min_reps=10, max_reps=1000,
              max_total=2.0):
    """Median seconds of the callables `fns` (one per input set, rotated):
    CUDA events around the call only; before each run, outside the events,
    the L2 is flushed by reading `flush` (twice the L2: it leaves clean
    lines, which the timed op evicts for free; writing it would leave dirty
    ones that the op pays to write back); a warm-up of each first."""
    for fn in fns:
        fn()
    sink = torch.empty((), dtype=flush.dtype, device="cuda")
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    while len(times) < max_reps and sum(times) < max_total and (
            len(times) < min_reps or sum(times) < min_total):
        torch.sum(flush, dim=0, out=sink)
        fn = fns[len(times) % len(fns)]
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3)
    return statistics.median(times), times


def copy_bandwidth(torch, flush, megabytes=1024):
    """Bytes read + written per second by a large device-to-device copy,
    timed like everything else (time_cuda, the same L2 flush)."""
    n = megabytes << 20
    src = torch.empty(n, dtype=torch.uint8, device="cuda").fill_(1)
    dst = torch.empty_like(src)
    seconds, _ = time_cuda([lambda: dst.copy_(src)], flush, torch, min_reps=20)
    del src, dst
    return 2 * n / seconds


# --- one problem ---------------------------------------------------------------

def read_records(path):
    records = []
    if os.path.exists(path):
        for line in open(path):
            try:
                records.append(json.loads(line))
            except ValueError:
                pass  # a line cut short by a kill
    return records


def best_records(records):
    """Per workload key: the record ke compiles (as its database's getBest):
    the fastest of the newest final record (the search's finalists re-timed
    side by side) and the valid trial and untuned records after it."""
    best = {}
    for r in records:
        if r.get("error") != "none" or r.get("role") not in ("trial", "untuned", "final"):
            continue
        key = r.get("workload")
        if (key not in best or r["role"] == "final" or
                r["median_seconds"] < best[key]["median_seconds"]):
            best[key] = r
    return best


def first_errors(records, limit=2):
    """The first distinct error messages among the records, shortened."""
    seen = []
    for r in records:
        if r.get("error") not in (None, "none"):
            text = f"{r['error']}: {r.get('message', '')}".strip()
            text = re.sub(r"\s+", " ", text)[:240]
            if text not in seen:
                seen.append(text)
            if len(seen) == limit:
                break
    return seen


def run_ke_problem(name, path, args, ke_opt, target, out_dir, timeout):
    """Tunes one suite file; returns the ke half of its row."""
    records_path = os.path.join(out_dir, "records", name + ".jsonl")
    os.makedirs(os.path.dirname(records_path), exist_ok=True)
    if os.path.exists(records_path):
        os.remove(records_path)
    cmd = [ke_opt, "tune", path, "--target", target, "--trials", str(args.trials),
           "--explore", str(args.explore), "--seed", str(args.seed),
           "--timeout", str(args.candidate_timeout), "--records", records_path,
           "--no-progress"]
    cmd += ["--no-db"] if args.no_db else ["--db", os.path.join(out_dir, "ke-gpu.db")]
    started = time.time()
    code, stdout, stderr = run_ke(cmd, timeout)
    row = {"ke_command": " ".join(os.path.basename(c) if c == ke_opt else c for c in cmd),
           "ke_wall_seconds": round(time.time() - started, 1)}
    records = read_records(records_path)
    summary = None
    if code == 0:
        try:
            summary = json.loads(stdout)
        except ValueError:
            row["ke_error"] = "unreadable tune summary"
    elif code == "timeout":
        row["ke_error"] = (f"ke-opt tune timed out after {timeout:.0f} s "
                           f"({len(records)} records kept)")
    else:
        tail = stderr.strip().splitlines()[-3:]
        row["ke_error"] = f"ke-opt tune exited {code}: " + " / ".join(tail)[:400]
    if summary:
        row["device"] = summary.get("device")
        workloads = summary["workloads"]
    else:
        # Fall back on the records: each workload's best so far.
        keys = []
        for r in records:
            if r.get("workload") not in keys:
                keys.append(r.get("workload"))
        workloads = [{"key": k, "count": 1} for k in keys]
    best = best_records(records)
    total, untuned, flops = 0.0, 0.0, 0
    trials = valid = 0
    errors = {}
    problems = []
    worst_error = 0.0
    kernels = 0
    for w in workloads:
        if w.get("fused_into"):
            continue  # measured as part of the kernel it is fused into
        if w.get("skipped"):
            problems.append(f"{w.get('op', '?')}: skipped: {w['skipped']}")
            continue
        count = w.get("count", 1)
        trials += w.get("trials", 0)
        valid += w.get("valid", 0)
        for k, v in (w.get("errors") or {}).items():
            errors[k] = errors.get(k, 0) + v
        flops += (w.get("flops") or 0) * count
        b = best.get(w["key"])
        seconds = w.get("best_seconds") or (b and b["median_seconds"])
        if not seconds:
            problems.append(f"{w.get('op', '?')}: no valid candidate")
            continue
        kernels += 1
        total += seconds * count
        untuned += (w.get("untuned_seconds") or 0) * count
        if b:
            worst_error = max(worst_error, b.get("relative_error", 0))
    row.update({"kernels": kernels, "trials": trials, "valid": valid,
                "errors": {k: v for k, v in errors.items() if v},
                "max_relative_error": worst_error, "flops": flops})
    if not problems and kernels and "ke_error" not in row:
        row["ke_seconds"] = total
        row["ke_untuned_seconds"] = untuned or None
    else:
        row["ke_problems"] = problems + [f"first errors: {e}" for e in first_errors(records)]
    return row


def run_torch_problem(name, path, torch, flush, seed, compile_mode=None):
    """The PyTorch half of a row. With `compile_mode`, each input set's
    callable is torch.compile'd in that mode and called once outside the
    timing (the compile, autotuning included, whose wall time the row keeps
    as torch_compile_seconds), then timed like eager."""
    try:
        args, _ = parse_signature(path)
        sets = []
        budget = 1 << 30
        per_set = sum(nbytes(s, d) for s, d in args)
        for i in range(max(1, min(3, budget // max(per_set, 1)))):
            tensors = random_inputs(args, torch, seed * 1000 + i)
            fn = torch_op(name, tensors, torch, path)
            if fn is None:
                return {"torch_error": "no PyTorch equivalent"}
            sets.append(fn)
        row = {}
        if compile_mode:
            # Every problem's callables are `<lambda>`s of one file name and
            # line, which Dynamo's frame state mixes up: without a reset, a
            # later problem ran an earlier one's graph recompiled with
            # dynamic shapes (no autotuning at its own shape; 2026-11-29).
            # Each problem is compiled afresh, specialized to its shapes.
            torch._dynamo.reset()
            started = time.time()
            sets = [torch.compile(fn, mode=compile_mode, dynamic=False) for fn in sets]
            for fn in sets:
                fn()
            torch.cuda.synchronize()
            row["torch_compile_seconds"] = round(time.time() - started, 1)
        seconds, times = time_cuda(sets, flush, torch)
        del sets
        torch.cuda.empty_cache()
        return {**row, "torch_seconds": seconds, "torch_repeats": len(times)}
    except Exception as e:  # OOM, an op PyTorch lacks: report, go on
        torch.cuda.empty_cache()
        return {"torch_error": f"{type(e).__name__}: {str(e)[:300]}"}


# --- report --------------------------------------------------------------------

def fmt_us(seconds):
    return f"{seconds * 1e6:.1f}" if seconds else "–"


def rate(row, seconds, bandwidth):
    """GFLOP/s for compute-bound problems, % of copy bandwidth otherwise."""
    if not seconds:
        return "–"
    moved = row.get("bytes", 0)
    flops = row.get("flops", 0)
    if moved and (not flops or flops / moved < MEMORY_BOUND_INTENSITY) and bandwidth:
        return f"{100 * moved / seconds / bandwidth:.0f}% BW"
    return f"{flops / seconds / 1e9:.0f} GFLOP/s" if flops else "–"


def markdown(meta, rows):
    bw = meta.get("copy_bandwidth")
    lines = [
        f"Device: {meta.get('device', '?')} (compute capability {meta.get('capability', '?')}, "
        f"driver {meta.get('driver', '?')}), PyTorch {meta.get('torch', '?')} "
        f"(CUDA {meta.get('torch_cuda', '?')}); ke target {meta.get('target', '?')}; "
        f"{meta.get('date', '?')}.",
        f"Command: `{meta.get('command', '?')}`",
        f"Copy bandwidth (device-to-device, read + written): "
        f"{bw / 1e9:.0f} GB/s." if bw else "Copy bandwidth: not measured.",
        "Times are medians (CUDA events; before each run the L2 is flushed by reading "
        "a buffer twice its size, so it holds clean lines); ke's are the "
        "sum of the problem's kernels, each checked against the device reference "
        "(docs/measurement.md). "
        f"PyTorch: {'torch.compile(mode=' + repr(meta['torch_compile']) + ')' if meta.get('torch_compile') else 'eager'}, "
        f"TF32 {'on (ke: +tf32)' if meta.get('target', '').endswith('+tf32') else 'off'}"
        f"{' (ke: +3xtf32)' if meta.get('target', '').endswith('+3xtf32') else ''}. "
        "*vs PyTorch* = PyTorch time / ke time (above 1: "
        f"ke is faster). Problems below {MEMORY_BOUND_INTENSITY:.0f} flop/byte are "
        "rated in % of the copy bandwidth (inputs + result bytes / time), others in GFLOP/s.",
        "",
        "| problem | dtype | ke µs | ke untuned µs | PyTorch µs | vs PyTorch | ke rate "
        "| PyTorch rate | valid / trials | max rel. error | notes |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ke, pt = r.get("ke_seconds"), r.get("torch_seconds")
        ratio = f"{pt / ke:.2f}" if ke and pt else "–"
        notes = []
        if r.get("ke_error"):
            notes.append(r["ke_error"])
        notes += r.get("ke_problems", [])
        if r.get("torch_error"):
            notes.append("PyTorch: " + r["torch_error"])
        if r.get("torch_compile_seconds") is not None:
            notes.append(f"tuning/compile s: ke {r.get('ke_wall_seconds', '?')}, "
                         f"torch.compile {r['torch_compile_seconds']}")
        if r.get("errors"):
            notes.append("errors: " + ", ".join(f"{k} {v}" for k, v in sorted(r["errors"].items())))
        note = "; ".join(notes).replace("|", "/")
        lines.append(
            f"| {r['problem']} | {r.get('dtype', '?')} | {fmt_us(ke)} | "
            f"{fmt_us(r.get('ke_untuned_seconds'))} | {fmt_us(pt)} | {ratio} | "
            f"{rate(r, ke, bw)} | {rate(r, pt, bw)} | {r.get('valid', 0)} / {r.get('trials', 0)} | "
            f"{r.get('max_relative_error', 0):.1e} | {note} |")
    return "\n".join(lines) + "\n"


def write_results(out_dir, meta, rows, results_md, section="gpu"):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "gpu-results.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    table = markdown(meta, rows)
    with open(os.path.join(out_dir, "gpu-results.md"), "w") as f:
        f.write(table)
    if results_md:
        heading = {"gpu": "GPU: ke against PyTorch"}.get(
            section, f"GPU: ke against PyTorch ({section})")
        replace_section(results_md, section, table, heading)
    return table


# --- main ----------------------------------------------------------------------

def select_problems(args):
    folder = args.dir or os.path.join(SUITE, "small" if args.small else "full")
    names = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(folder, "*.mlir")))
    if args.only:
        wanted = args.only.split(",")
        unknown = [n for n in wanted if n not in names]
        if unknown:
            sys.exit(f"gpu-bench: unknown problems {unknown}; the suite has {names}")
        names = [n for n in names if n in wanted]
    skip = set(args.skip.split(",")) if args.skip else set()
    names = [n for n in names if n not in skip]
    if args.part:
        k, n = (int(x) for x in args.part.split("/"))
        names = names[k - 1::n]
    return folder, names


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="the small suite")
    parser.add_argument("--dir", help="problems from this folder instead of the suite "
                        "(benchmarks/gpu/problems: matmul 4096^3)")
    parser.add_argument("--smoke", action="store_true",
                        help="quick check: 3 small problems, 4 trials each")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--explore", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", help="comma-separated problem names")
    parser.add_argument("--skip", default="matmul_irregular",
                        help="comma-separated problems to leave out (default: "
                        "matmul_irregular, whose 286 GFLOP CPU reference runs for minutes)")
    parser.add_argument("--part", help="K/N: every N-th problem from the K-th (split a suite)")
    parser.add_argument("--budget", type=float, default=480,
                        help="seconds from the start; no new problem starts after this")
    parser.add_argument("--deadline", type=float, default=570,
                        help="seconds from the start; tuning is cut off at this (the device "
                        "tool stops a command at 600 s)")
    parser.add_argument("--problem-timeout", type=float, default=300,
                        help="seconds for one problem's ke-opt tune")
    parser.add_argument("--candidate-timeout", type=float, default=30,
                        help="seconds per candidate (ke-opt tune --timeout)")
    parser.add_argument("--ke-opt", help="ke-opt binary (default: build/package)")
    parser.add_argument("--no-db", action="store_true", help="tune without a database")
    parser.add_argument("--chip", help="the CUDA chip of ke's target; default: sm_90a "
                        "on Hopper (wgmma), else the device's, else the newest ke "
                        "knows that it runs (sm_90: Hopper on mma.sync)")
    parser.add_argument("--allow-tf32", action="store_true",
                        help="f32 contractions on TF32 tensor cores, ke (target "
                        "cuda:sm_XY+tf32) and PyTorch (allow_tf32) alike")
    parser.add_argument("--torch-compile", metavar="MODE",
                        help="time PyTorch through torch.compile(mode=MODE) (e.g. "
                        "max-autotune: Inductor's Triton autotuning) instead of "
                        "eager; each problem's compile wall time is reported "
                        "beside ke's tuning time")
    parser.add_argument("--tf32x3", action="store_true",
                        help="ke's f32 contractions as three TF32 products each "
                        "(target cuda:sm_XY+3xtf32, checked at the f32 "
                        "tolerance); PyTorch stays in IEEE f32")
    parser.add_argument("--mfma-emulation", action="store_true",
                        help="ke's 16-bit contractions as ROCm's gpu.mfma kernels "
                        "with MFMA emulated (target cuda:sm_XY+mfma-emulation): "
                        "checks those kernels on an NVIDIA GPU; their times mean "
                        "nothing")
    parser.add_argument("--out", default=os.environ.get("OUT") or os.path.join(ROOT, "build", "gpu-bench"),
                        help="output folder (default $OUT)")
    parser.add_argument("--results", help="docs/results.md to update between the gpu markers")
    parser.add_argument("--section", default="gpu",
                        help="the markers' name in --results (gpu: the suite's table; "
                             "realistic: benchmarks/realistic's)")
    parser.add_argument("--merge", nargs="*", default=[],
                        help="gpu-results.json files of earlier runs to include")
    parser.add_argument("--report-only", action="store_true",
                        help="run nothing: write the table of --merge files")
    args = parser.parse_args()
    if args.smoke:
        args.small, args.trials, args.explore = True, 4, 2
        args.only = args.only or "matmul_square,softmax,relu_chain"

    rows, meta, commands = [], {}, []
    for path in args.merge:
        data = json.load(open(path))
        meta = meta or dict(data["meta"])
        rows += data["rows"]
        if data["meta"].get("command") not in commands:
            commands.append(data["meta"].get("command"))
    if len(commands) > 1:  # the parts of one run: name every command
        meta["command"] = "` and `".join(str(c) for c in commands)
    if args.report_only:
        print(write_results(args.out, meta, rows, args.results, args.section))
        return 0

    import torch  # only needed from here on
    if not torch.cuda.is_available():
        sys.exit("gpu-bench: PyTorch sees no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = args.allow_tf32
    torch.backends.cudnn.allow_tf32 = args.allow_tf32
    torch.backends.cudnn.benchmark = True  # PyTorch's best algorithm per shape

    # Not under --out: the unpacked binary (120 MB) must not travel back.
    ke_opt = find_ke_opt(args.ke_opt, os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                   "ke-gpu-bench"))
    use_carried_openmp()
    code, version, err = run_ke([ke_opt, "--version"], 60)
    if code != 0:
        sys.exit(f"gpu-bench: {ke_opt} --version failed ({code}): {err[-500:]}")
    capability = torch.cuda.get_device_capability(0)
    if args.mfma_emulation and not args.chip:
        args.chip = "sm_90"  # sm_90a would give 16-bit matmuls to gpu.wgmma
    target = "cuda:" + args.chip if args.chip else pick_target(ke_opt, capability)
    if args.allow_tf32:
        target += "+tf32"
    elif args.tf32x3:
        target += "+3xtf32"
    elif args.mfma_emulation:
        target += "+mfma-emulation"
    driver = "?"
    if shutil.which("nvidia-smi"):
        code, out, _ = run_ke(["nvidia-smi", "--query-gpu=driver_version",
                               "--format=csv,noheader"], 60)
        if code == 0 and out.strip():
            driver = out.strip().splitlines()[0]
    props = torch.cuda.get_device_properties(0)
    flush = make_flush(torch)
    log(f"device {props.name}, sm_{capability[0]}{capability[1]}, ke target {target}")
    log(f"ke-opt: {version.splitlines()[0] if version else '?'}")
    bandwidth = copy_bandwidth(torch, flush)
    log(f"copy bandwidth {bandwidth / 1e9:.0f} GB/s")
    new_meta = {
        "device": props.name, "capability": f"{capability[0]}.{capability[1]}",
        "driver": driver, "torch": torch.__version__, "torch_cuda": torch.version.cuda,
        "target": target, "date": datetime.date.today().isoformat(),
        "ke_version": version.strip().splitlines()[0] if version else "?",
        "copy_bandwidth": bandwidth,
        "torch_compile": args.torch_compile,
        "command": "python3 benchmarks/gpu/run.py " + " ".join(sys.argv[1:]),
    }
    meta = {**new_meta, **({"merged_from": meta.get("command")} if meta else {})}

    folder, names = select_problems(args)
    done = {r["problem"] for r in rows}
    for i, name in enumerate(names):
        if name in done:
            continue
        row = {"problem": name}
        path = os.path.join(folder, name + ".mlir")
        try:
            arg_types, result = parse_signature(path)
            row["dtype"] = ",".join(sorted({d for _, d in arg_types} | {result[1]}))
            row["bytes"] = sum(nbytes(s, d) for s, d in arg_types) + nbytes(*result)
        except (ValueError, OSError) as e:
            row["ke_error"] = str(e)
        if time.time() - START > args.budget:
            row["ke_error"] = f"not run: the --budget of {args.budget:.0f} s was spent"
            rows.append(row)
            continue
        log(f"[{i + 1}/{len(names)}] {name}: tuning ({args.trials} trials)")
        if "ke_error" not in row:
            # Leave PyTorch 20 s before the deadline.
            timeout = min(args.problem_timeout, args.deadline - 20 - (time.time() - START))
            row.update(run_ke_problem(name, path, args, ke_opt, target, args.out, timeout))
        log(f"[{i + 1}/{len(names)}] {name}: PyTorch")
        row.update(run_torch_problem(name, path, torch, flush, args.seed,
                                     args.torch_compile))
        ke, pt = row.get("ke_seconds"), row.get("torch_seconds")
        status = (f"ke {ke * 1e6:.1f} us" if ke else "ke FAILED: " +
                  (row.get("ke_error") or "; ".join(row.get("ke_problems", []))))
        status += f", PyTorch {pt * 1e6:.1f} us" if pt else f", PyTorch FAILED: {row.get('torch_error')}"
        log(f"[{i + 1}/{len(names)}] {name}: {status}")
        rows.append(row)
        write_results(args.out, meta, rows, None)  # a run cut short keeps its rows
    table = write_results(args.out, meta, rows, args.results, args.section)
    print(table)
    failed = [r["problem"] for r in rows if not r.get("ke_seconds")]
    log(f"{len(rows) - len(failed)}/{len(rows)} problems measured by ke"
        + (f"; failed or not run: {', '.join(failed)}" if failed else ""))
    log(f"wrote {os.path.join(args.out, 'gpu-results.md')} and gpu-results.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

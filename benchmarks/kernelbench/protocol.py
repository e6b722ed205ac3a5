"""KernelBench's correctness and timing protocol, and the guards against
the known ways of fooling it.

Correctness (KernelBench's src/kernelbench/eval.py): the model is built
under seed 42; each of `trials` trials draws fresh inputs under its own
seed, runs the reference model and the candidate on them (no_grad), and
passes only if every output has the reference's shape and
`torch.allclose(out, ref, atol=tol, rtol=tol)` holds, with tol 1e-4 for
fp32 and 1e-2 for fp16/bf16. The guards run inside the same trials:

- fresh inputs every trial, so a candidate that caches its first output
  fails the second trial;
- each input is compared with a copy taken before the call (a
  position-weighted fingerprint of its bits above 1 GiB), so a candidate
  that writes its inputs fails;
- the candidate's outputs must not alias its inputs or the previous
  trial's outputs (a buffer returned again);
- on CUDA, the candidate runs on a side stream and its outputs are read
  after synchronising only that stream's event, so work queued on other
  streams reads as unfinished; the timing also compares CUDA-event time
  with wall-clock time over back-to-back calls (`hidden_work`).

Timing: CUDA events around each call on the current stream, the L2 flushed
before each call by reading a buffer twice its size (benchmarks/gpu/run.py,
`time_cuda`), a warm-up, the median of at least `min_runs` runs; on the CPU,
time.perf_counter around each call. Timing inputs are drawn fresh, apart
from the check's. A speedup above SUSPICIOUS is re-checked with more
trials and re-timed before it is kept, and flagged in the results.
"""

import contextlib
import statistics
import time

from problems import make_inputs, tensor_inputs

#: KernelBench's tolerances (atol = rtol) per dtype name.
TOLERANCES = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 1e-2}
#: Seeds of the correctness trials, and of the timing inputs.
TRIAL_SEED, TIMING_SEED, RECHECK_SEED = 1000, 2000, 3000
#: A speedup above this is re-checked and flagged.
SUSPICIOUS = 5.0


def _as_tuple(torch, value):
    if isinstance(value, torch.Tensor):
        return (value,)
    return tuple(value)


def _synchronize(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def _call_checked(torch, candidate, inputs, device):
    """Runs the candidate on `inputs` (on a side stream on CUDA) and
    returns its outputs once that stream's work is done."""
    if device != "cuda":
        return candidate(*inputs)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        outputs = candidate(*inputs)
        done = stream.record_event()
    done.synchronize()
    return outputs


#: Inputs larger than this are fingerprinted instead of copied for the
#: mutation check (KernelBench's inputs reach 16 GB; a copy would not fit
#: beside the reference and the candidate's outputs).
COPY_LIMIT_BYTES = 1 << 30


def fingerprint(torch, tensor, chunk=1 << 26):
    """A position-weighted sum of the tensor's bits, in chunks: any change
    to any element changes it (short of a deliberate collision)."""
    flat = tensor.detach().reshape(-1)
    if flat.element_size() == 2:
        bits = flat.view(torch.int16)
    elif flat.element_size() == 8:
        bits = flat.view(torch.int64)
    elif flat.element_size() == 1:
        bits = flat.view(torch.uint8)
    else:
        bits = flat.view(torch.int32)
    total = 0
    for start in range(0, bits.numel(), chunk):
        piece = bits[start:start + chunk].to(torch.int64)
        weights = torch.arange(start + 1, start + 1 + piece.numel(),
                               device=piece.device, dtype=torch.int64)
        total += int((piece * weights).sum().item()) + int(piece.sum().item())
    return total


def _snapshot(torch, value):
    """What the mutation check compares after the call: a copy of a small
    input, a fingerprint of a large one."""
    if not isinstance(value, torch.Tensor):
        return value
    if value.numel() * value.element_size() <= COPY_LIMIT_BYTES:
        return ("copy", value.clone())
    return ("fingerprint", fingerprint(torch, value))


def _unchanged(torch, value, snapshot):
    if not isinstance(value, torch.Tensor):
        return True
    kind, saved = snapshot
    if kind == "copy":
        return torch.equal(value, saved)
    return fingerprint(torch, value) == saved


@contextlib.contextmanager
def _exact_fp32(torch):
    """TF32 off while the reference runs: cuDNN's default TF32 convolutions
    (10-bit mantissas) miss an exact fp32 result by more than KernelBench's
    1e-4. Restored after, so that the baselines are timed with PyTorch's
    defaults."""
    saved = (torch.backends.cudnn.allow_tf32,
             torch.backends.cuda.matmul.allow_tf32)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        (torch.backends.cudnn.allow_tf32,
         torch.backends.cuda.matmul.allow_tf32) = saved


# Elements compared at a time: the errors are computed in float64, and a
# whole KernelBench output (up to 2^31 elements) in float64 with its
# temporaries would not fit next to the model on an 80 GB GPU.
COMPARE_CHUNK = 1 << 26


def _compare(torch, actual, expected, tol):
    """torch.allclose(actual, expected, atol=tol, rtol=tol), the largest
    absolute error (NaN as infinity) with where it is, (flat index, actual,
    expected) or None for an empty tensor, and how many elements are not
    close; chunk by chunk, the same answer as on the whole tensors."""
    a, e = actual.reshape(-1), expected.reshape(-1)
    close, worst, where, outside = True, 0.0, None, 0
    for start in range(0, e.numel(), COMPARE_CHUNK):
        ca, ce = a[start:start + COMPARE_CHUNK], e[start:start + COMPARE_CHUNK]
        errors = (ca.double() - ce.double()).abs().nan_to_num(float("inf"))
        flat = int(errors.argmax().item())
        error = errors[flat].item()
        if where is None or error > worst:
            worst = error
            where = (start + flat, ca[flat].item(), ce[flat].item())
        del errors
        # allclose is isclose everywhere; the count says whether a wrong
        # result is a few elements one rounding away or the whole tensor.
        near = torch.isclose(ca, ce, atol=tol, rtol=tol)
        outside += int(near.numel() - near.sum().item())
        close = close and bool(near.all().item())
    return close, worst, where, outside


def check(torch, namespace, model, candidate, device, dtype_name, dtype,
          trials=5, first_seed=TRIAL_SEED):
    """KernelBench's correctness check of `candidate` against `model`, with
    the reference in exact fp32 (no TF32). Returns {"outcome": "correct"}
    or {"outcome": "wrong-result", "detail": ..., "max_abs_error": ...};
    exceptions propagate (the caller records a runtime-error)."""
    with _exact_fp32(torch):
        return _check(torch, namespace, model, candidate, device,
                      dtype_name, dtype, trials, first_seed)


def _check(torch, namespace, model, candidate, device, dtype_name, dtype,
           trials, first_seed):
    tol = TOLERANCES[dtype_name]
    worst = 0.0
    # The previous trial's outputs, kept alive so that a new output cannot
    # reuse their memory by chance: an output at the same address is one
    # the candidate returned twice. (Only the last trial's: KernelBench's
    # inputs and outputs run to 12 GB each.)
    previous = ()
    for trial in range(trials):
        inputs = make_inputs(torch, namespace, first_seed + trial, device,
                             dtype)
        with torch.no_grad():
            expected = _as_tuple(torch, model(*inputs))
        copies = [_snapshot(torch, x) for x in inputs]
        _synchronize(torch, device)
        with torch.no_grad():
            actual = _as_tuple(torch, _call_checked(torch, candidate, inputs,
                                                    device))
        for i, (x, copy) in enumerate(zip(inputs, copies)):
            if not _unchanged(torch, x, copy):
                return {"outcome": "wrong-result",
                        "detail": "input %d was modified by the call" % i,
                        "trial": trial}
        if len(actual) != len(expected):
            return {"outcome": "wrong-result",
                    "detail": "%d outputs, expected %d" %
                    (len(actual), len(expected)), "trial": trial}
        pointers = {x.data_ptr() for x in tensor_inputs(torch, inputs)}
        for i, (a, e) in enumerate(zip(actual, expected)):
            if not isinstance(a, torch.Tensor) or a.shape != e.shape:
                return {"outcome": "wrong-result",
                        "detail": "output %d has shape %s, expected %s" %
                        (i, tuple(getattr(a, "shape", ())), tuple(e.shape)),
                        "trial": trial}
            if a.data_ptr() in pointers or any(
                    a.data_ptr() == p.data_ptr() for p in previous):
                return {"outcome": "wrong-result",
                        "detail": "output %d aliases an input or an earlier "
                        "output" % i, "trial": trial}
            a = a.to(e.dtype)
            close, error, where, outside = _compare(torch, a, e, tol)
            worst = max(worst, error)
            if not close:
                result = {"outcome": "wrong-result",
                          "detail": "output %d: max abs error %.3g at atol = "
                          "rtol = %g, %d of %d elements outside (trial %d)" %
                          (i, worst, tol, outside, e.numel(), trial),
                          "max_abs_error": worst, "outside": outside,
                          "elements": e.numel(), "trial": trial}
                if where:
                    # Where the largest error is, for diagnosis.
                    result["worst"] = {"flat_index": where[0],
                                       "actual": where[1],
                                       "expected": where[2],
                                       "shape": list(e.shape)}
                return result
        previous = actual
        del inputs, copies, expected
    return {"outcome": "correct", "max_abs_error": worst, "trials": trials}


def time_call(torch, call, device, flush=None, min_runs=100,
              max_seconds=2.0):
    """Median seconds of `call()` over at least `min_runs` runs (fewer when
    they exceed `max_seconds`, at least 5), after a warm-up."""
    if device == "cuda":
        import run as gpu_run  # benchmarks/gpu/run.py
        median, times = gpu_run.time_cuda(
            [call], flush, torch, min_total=0.0, min_reps=min_runs,
            max_reps=min_runs, max_total=max_seconds)
        return median, len(times)
    call()
    times = []
    while len(times) < 5 or (len(times) < min_runs and
                             sum(times) < max_seconds):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), len(times)


def wall_per_call(torch, call, device, runs=20):
    """Seconds per call of `runs` back-to-back calls, from the first call
    to the end of all device work (hidden-work guard)."""
    call()
    _synchronize(torch, device)
    start = time.perf_counter()
    for _ in range(runs):
        call()
    _synchronize(torch, device)
    return (time.perf_counter() - start) / runs

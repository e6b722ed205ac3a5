"""The KernelBench harness's own tests: its protocol must catch the known
ways of fooling a benchmark (adversarial candidates below), a crash or a
hang must become an outcome, the metrics follow KernelBench's definitions,
and the CPU scaling rule shrinks sizes as documented. Run with
build/venv/bin/python -m pytest benchmarks/kernelbench/tests."""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import protocol  # noqa: E402
import report  # noqa: E402
from problems import Problem, build_model, op_kind  # noqa: E402
from worker import Worker  # noqa: E402

PROBLEM = textwrap.dedent('''
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, features, out_features):
            super().__init__()
            self.fc = nn.Linear(features, out_features)

        def forward(self, x):
            return torch.relu(self.fc(x))

    batch_size = 64
    features = 2048 * 2
    out_features = 8
    bias_shape = (out_features, batch_size)

    def get_inputs():
        return [torch.randn(batch_size, features)]

    def get_init_inputs():
        return [features, out_features]
''')


@pytest.fixture
def problem(tmp_path):
    folder = tmp_path / "level9"
    folder.mkdir()
    path = folder / "1_Linear_ReLU.py"
    path.write_text(PROBLEM)
    return Problem(str(path))


def _check(problem, candidate_for, trials=3):
    namespace = problem.load(scale=16)
    model = build_model(torch, namespace, "cpu")
    return protocol.check(torch, namespace, model, candidate_for(model),
                          "cpu", "fp32", None, trials=trials)


def test_an_honest_candidate_is_correct(problem):
    result = _check(problem, lambda model: lambda x: model(x).clone())
    assert result["outcome"] == "correct"


def test_a_cached_output_is_caught(problem):
    def caching(model):
        cache = []

        def candidate(x):
            if not cache:
                cache.append(model(x))
            return cache[0].clone()
        return candidate
    result = _check(problem, caching)
    assert result["outcome"] == "wrong-result" and result["trial"] == 1


def test_a_mutated_input_is_caught(problem):
    def mutating(model):
        def candidate(x):
            y = model(x)
            x.zero_()
            return y
        return candidate
    result = _check(problem, mutating)
    assert result["outcome"] == "wrong-result"
    assert "input 0 was modified" in result["detail"]


def test_a_mutated_large_input_is_caught(problem, monkeypatch):
    # Above the copy limit inputs are fingerprinted: one changed element in
    # the middle must still show.
    monkeypatch.setattr(protocol, "COPY_LIMIT_BYTES", 0)

    def mutating(model):
        def candidate(x):
            y = model(x)
            x.view(-1)[x.numel() // 2] += 1.0
            return y
        return candidate
    result = _check(problem, mutating)
    assert result["outcome"] == "wrong-result"
    assert "input 0 was modified" in result["detail"]
    assert protocol.fingerprint(torch, torch.ones(5)) != \
        protocol.fingerprint(torch, torch.tensor([1.0, 1, 1, 1, 1.0000001]))
    # Swapping two elements changes it too (the weights are positions).
    assert protocol.fingerprint(torch, torch.tensor([1.0, 2.0])) != \
        protocol.fingerprint(torch, torch.tensor([2.0, 1.0]))


def test_the_chunked_comparison_is_the_whole_one(monkeypatch):
    # Outputs are compared a chunk at a time (float64 errors of a whole
    # KernelBench output do not fit a GPU): the verdict, the largest error
    # and where it is must be those of the whole tensors, wherever the
    # largest error falls and whatever the chunk.
    monkeypatch.setattr(protocol, "COMPARE_CHUNK", 7)
    expected = torch.linspace(-1, 1, 50).reshape(5, 10)
    for flat, delta in [(0, 0.5), (23, 2e-5), (49, 0.25)]:
        actual = expected.clone()
        actual.view(-1)[flat] += delta
        actual.view(-1)[11] += 1e-6
        close, worst, where, outside = protocol._compare(torch, actual,
                                                         expected, 1e-4)
        assert close == torch.allclose(actual, expected, atol=1e-4, rtol=1e-4)
        assert outside == int((~torch.isclose(actual, expected, atol=1e-4,
                                              rtol=1e-4)).sum())
        assert worst == pytest.approx((actual - expected).abs().max().item())
        assert where[0] == flat
    nan = expected.clone()
    nan.view(-1)[30] = float("nan")
    close, worst, where, outside = protocol._compare(torch, nan, expected,
                                                     1e-4)
    assert not close and worst == float("inf") and where[0] == 30
    assert outside == 1


def test_a_reused_output_buffer_is_caught(problem):
    # Right values every time, but always in the same tensor: a caller
    # that keeps an earlier result sees it change.
    def reusing(model):
        buffer = []

        def candidate(x):
            y = model(x)
            if not buffer:
                buffer.append(torch.empty_like(y))
            return buffer[0].copy_(y)
        return candidate
    result = _check(problem, reusing)
    assert result["outcome"] == "wrong-result"
    assert "aliases" in result["detail"] and result["trial"] == 1


def test_a_slightly_wrong_output_is_caught(problem):
    result = _check(problem, lambda model: lambda x: model(x) + 1e-3)
    assert result["outcome"] == "wrong-result"
    assert result["max_abs_error"] == pytest.approx(1e-3, rel=1e-2)


def test_a_wrong_shape_or_count_is_caught(problem):
    assert _check(problem, lambda m: lambda x: m(x)[:1])["outcome"] == \
        "wrong-result"
    assert _check(problem, lambda m: lambda x: (m(x), m(x)))["outcome"] == \
        "wrong-result"


def _crash(task):
    os.abort()


def _hang(task):
    time.sleep(60)


def _fail(task):
    raise RuntimeError("kernel launch failed")


def _hang_with_child(task):
    child = subprocess.Popen(["sleep", "60"])
    with open(task, "w") as f:
        f.write(str(child.pid))
    time.sleep(60)


def _ok(task):
    return {"outcome": "correct", "value": task}


def test_a_crash_a_hang_and_an_exception_are_outcomes():
    for function, outcome in ((_crash, "runtime-error"), (_hang, "timeout"),
                              (_fail, "runtime-error")):
        worker = Worker(function, timeout=5)
        try:
            result = worker.run(1)
        finally:
            worker.close()
        assert result["outcome"] == outcome, result
    # A worker keeps serving after a task's own exception.
    worker = Worker(_ok, timeout=30)
    try:
        assert worker.run(7)["value"] == 7
        assert worker.run(8)["value"] == 8
    finally:
        worker.close()


def test_a_timeout_ends_what_the_task_started(tmp_path):
    # A hung problem's compiler must not keep running after its timeout.
    pid_file = str(tmp_path / "child.pid")
    worker = Worker(_hang_with_child, timeout=5)
    try:
        assert worker.run(pid_file)["outcome"] == "timeout"
    finally:
        worker.close()
    pid = int(open(pid_file).read())
    time.sleep(0.5)
    try:
        with open("/proc/%d/status" % pid) as f:
            state = next(l for l in f if l.startswith("State:"))
        assert "Z" in state  # a zombie at most: not running
    except FileNotFoundError:
        pass  # reaped


def test_the_scaling_rule(problem):
    namespace = problem.load(scale=16)
    assert namespace["batch_size"] == 16  # max(16, 64 // 16)
    assert namespace["features"] == 256  # 4096 // 16, an expression
    assert namespace["out_features"] == 8  # below 32: kept
    assert namespace["bias_shape"] == (8, 16)  # follows the names
    assert problem.load()["features"] == 4096


def test_op_kinds():
    assert op_kind("ConvTranspose3d_BatchNorm_Subtract") == "conv-transpose"
    assert op_kind("Gemm_Scale_BatchNorm") == "matmul"
    assert op_kind("Softmax") == "softmax"
    assert op_kind("ReLU") == "elementwise"


def test_metrics_follow_kernelbench():
    def result(name, outcome, ke=None, eager=None, compiled=None):
        r = {"name": name, "outcome": outcome, "kind": "matmul"}
        if ke:
            r["times"] = {"ke": ke, "eager": eager}
            if compiled:
                r["times"]["compile:default"] = compiled
        return r
    results = [result("level1/1_a", "correct", 1.0, 2.0, 0.5),
               result("level1/2_b", "correct", 1.0, 1.2, 3.0),
               result("level1/3_c", "wrong-result"),
               result("level1/4_d", "timeout")]
    m = report.metrics(results)
    assert m["correct"] == 2 and m["total"] == 4
    assert m["eager"]["fast_0"] == 0.5  # failures in the denominator
    assert m["eager"]["fast_1"] == 0.5
    assert m["eager"]["fast_1.5"] == 0.25
    assert m["eager"]["fast_2"] == 0.0  # 2.0 is not > 2
    assert m["eager"]["geomean"] == pytest.approx((2.0 * 1.2) ** 0.5)
    assert m["compile:default"]["fast_1"] == 0.25
    untimed = report.metrics([result("level1/1_a", "correct")])
    assert untimed["eager"]["fast_0"] == 1.0
    assert untimed["eager"]["fast_1"] is None  # not 0%: nothing was timed
    lines = report.markdown("test", results)
    assert any("| level1/4_d | timeout |" in line for line in lines)


def test_results_survive_a_torn_line(tmp_path):
    with open(tmp_path / "results.jsonl", "w") as f:
        f.write(json.dumps({"name": "level1/1_a", "outcome": "correct"}) +
                "\n" + '{"name": "level1/2_b", "outc')
    assert list(report.read_results(str(tmp_path))) == ["level1/1_a"]


def test_a_deadline_leaves_the_rest_for_resume(tmp_path):
    import harness
    folder = tmp_path / "kb"
    folder.mkdir()
    files = []
    for name in ("1_a", "2_b", "3_c"):
        path = tmp_path / "level1" / (name + ".py")
        path.parent.mkdir(exist_ok=True)
        path.write_text(PROBLEM)
        files.append(str(path))
    with open(folder / "prepare.json", "w") as f:
        json.dump({"target": "cpu", "dtype": "fp32", "scale": 1}, f)
    with open(folder / "prepare.jsonl", "w") as f:
        for name in ("1_a", "2_b", "3_c"):
            f.write(json.dumps({"name": "level1/" + name,
                                "outcome": "unsupported-op",
                                "detail": "tm_tensor.scan"}) + "\n")
    args = ["run", str(folder), "--problems", str(tmp_path / "level1")]
    # Past the deadline before the first problem: nothing is recorded.
    harness.main(args + ["--deadline", "1e-9"])
    assert not os.path.exists(folder / "results.jsonl")
    harness.main(args + ["--resume"])
    assert sorted(report.read_results(str(folder))) == [
        "level1/1_a", "level1/2_b", "level1/3_c"]


def test_exact_comparison_counts_what_the_tolerance_rejects():
    # exact.py's measure: largest and mean difference, and the elements
    # outside atol = rtol = tol (KernelBench's test, element by element).
    import exact
    reference = torch.tensor([1.0, 2.0, -4.0, 0.0], dtype=torch.float64)
    actual = torch.tensor([1.0, 2.02, -4.06, 0.011], dtype=torch.bfloat16)
    got = exact.compare(torch, actual.float(), reference, 1e-2)
    # bf16 rounds 2.02 to 2.015625 and -4.06 to -4.0625; 0.011 to 0.01098.
    assert got["outside"] == 2  # -4.0625 (> 0.05) and 0.01098 (> 0.01)
    assert abs(got["max"] - 0.0625) < 1e-9
    assert exact.compare(torch, reference, reference, 1e-2) == {
        "max": 0.0, "mean": 0.0, "outside": 0}


def test_bounds_count_the_gemm_and_read_eager_times(problem, tmp_path):
    """bounds.py: an nn.Linear of 64 x 4096 -> 8 is 2 x 64 x 4096 x 8
    FLOPs (the bias and ReLU are not contractions) and moves at least its
    input, weights, bias and output; eager's time comes from a markdown
    row or a results folder, and a problem eager beats the f32 bound is
    counted as such."""
    import bounds
    flops, nbytes = bounds.count(torch, problem)
    assert flops == 2 * 64 * 4096 * 8
    assert nbytes == 4 * (64 * 4096 + 8 * 4096 + 8 + 64 * 8)
    table = tmp_path / "t.md"
    table.write_text("## other\n| level9/1_Linear_ReLU | correct | 9.0 | 1.0 | 0.11 |\n"
                     "## fp32\n| level9/1_Linear_ReLU | correct | 5.0 | 2.5 | 0.5 |\n")
    assert bounds.read_eager(str(table), "## fp32") == {"level9/1_Linear_ReLU": 2.5}
    (tmp_path / "results.jsonl").write_text(json.dumps(
        {"name": "level9/1_Linear_ReLU", "times": {"eager": 2e-6, "ke": 4e-6}}) + "\n")
    assert bounds.read_eager(str(tmp_path)) == {"level9/1_Linear_ReLU": 2.0}
    rows = tmp_path / "rows.json"
    bounds.main([problem.path, "--eager", str(tmp_path), "--json", str(rows)])
    [row] = json.loads(rows.read_text())
    # 4.2 MFLOP at 66.9 TFLOP/s is 0.06 us, 1.2 MB at 4.8 TB/s 0.26 us:
    # eager's 2 us is slower than the bound.
    assert row["bound_us"] == pytest.approx(nbytes / 4800e9 * 1e6)
    assert row["eager_us"] == 2.0

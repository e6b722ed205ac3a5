"""Where an imported 16-bit model rounds (ke.import_torch's `roundings`):
eager PyTorch computes each op in f32 and rounds its result once, so an
import that rounds elsewhere fails KernelBench's comparison with eager."""

import re

import pytest
import torch

import ke


class _GroupNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.GroupNorm(2, 8)

    def forward(self, x):
        return self.norm(x)


class _ConvWithBias(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 8, 3)

    def forward(self, x):
        return self.conv(x)


def _group_norm_case():
    model = _GroupNorm().to(torch.bfloat16)
    with torch.no_grad():
        model.norm.weight.uniform_(0.5, 1.5)
        model.norm.bias.uniform_(-1, 1)
    # Groups of values near 100: a mean rounded to bf16 (a step of 0.5
    # there) moves every normalised value by up to half a deviation.
    x = (100 + torch.randn(2, 8, 6, 6)).to(torch.bfloat16)
    return model, (x,)


def test_group_norm_computes_in_f32():
    model, inputs = _group_norm_case()
    text = ke.import_torch(model, inputs)
    # One rounding to bf16, the result's, and no bf16 arithmetic.
    assert text.count(" to bf16") == 1, text
    assert not re.search(r"(arith\.\w+f|math\.\w+) [^\n]*: bf16 loc", text), \
        text
    with torch.no_grad():
        expected = model(*inputs)
    actual = ke.compile(text)(*inputs)
    assert torch.allclose(actual.float(), expected.float(), atol=1e-2,
                          rtol=1e-2), (actual - expected).abs().max()


def test_f32_group_norm_is_torch_mlirs():
    model, (x,) = _group_norm_case()
    model = model.float()
    text = ke.import_torch(model, (x.float(),))
    assert "bf16" not in text and "f16" not in text
    with torch.no_grad():
        expected = model(x.float())
    actual = ke.compile(text)(x.float())
    assert torch.allclose(actual, expected, atol=1e-4, rtol=1e-4)


def _cuda_group_norm(model, x):
    """Eager CUDA's bf16 GroupNorm, written out: f32 statistics stored in
    bf16, then a x + b per channel in f32."""
    norm = model.norm
    n, c, groups = x.shape[0], x.shape[1], norm.num_groups
    xs = x.float().reshape(n, groups, -1)
    mean = xs.mean(-1).to(x.dtype).float()
    rstd = torch.rsqrt(xs.var(-1, unbiased=False) + norm.eps)
    rstd = rstd.to(x.dtype).float()
    a = rstd.repeat_interleave(c // groups, 1) * norm.weight.float()
    b = norm.bias.float() - a * mean.repeat_interleave(c // groups, 1)
    shape = (n, c) + (1,) * (x.dim() - 2)
    return (x.float() * a.reshape(shape) + b.reshape(shape)).to(x.dtype)


def test_gpu_roundings_round_group_norm_statistics_as_cuda():
    model, inputs = _group_norm_case()
    text = ke.import_torch(model, inputs, roundings="gpu")
    actual = ke.compile(text)(*inputs)
    expected = _cuda_group_norm(model, *inputs)
    assert torch.allclose(actual.float(), expected.float(), atol=1e-2,
                          rtol=1e-2), (actual - expected).abs().max()
    # The rounded mean (a step of 0.5 near 100) is what the test checks:
    # f32 statistics give another result.
    with torch.no_grad():
        f32_statistics = model(*inputs)
    assert not torch.allclose(actual.float(), f32_statistics.float(),
                              atol=1e-2, rtol=1e-2)


def _conv_text(roundings, dtype=torch.bfloat16):
    torch.manual_seed(0)
    model = _ConvWithBias().to(dtype)
    x = torch.randn(1, 4, 6, 6).to(dtype)
    return ke.import_torch(model, (x,), roundings=roundings)


def _conv_line(text):
    return next(line for line in text.splitlines()
                if "linalg.conv_2d_nchw_fchw" in line)


def test_cpu_roundings_add_the_bias_in_the_accumulator():
    text = _conv_text("cpu")
    assert "linalg.broadcast" in text  # the bias, as the conv's init
    assert "addf" not in text


def test_gpu_roundings_add_the_bias_after_rounding():
    text = _conv_text("gpu")
    lines = text.splitlines()
    conv = lines.index(_conv_line(text))
    truncf = next(i for i, line in enumerate(lines) if "arith.truncf" in line)
    add = next(i for i, line in enumerate(lines)
               if "arith.addf" in line and ": bf16" in line)
    assert conv < truncf < add, text
    assert "linalg.broadcast" not in text  # the init is a plain fill


def test_gpu_roundings_leave_f32_convolutions():
    assert _conv_text("gpu", torch.float32) == _conv_text("cpu", torch.float32)


def test_compile_rounds_as_its_target():
    from ke._compiled import _mlir_text
    model = _ConvWithBias().to(torch.bfloat16)
    x = torch.randn(1, 4, 6, 6).to(torch.bfloat16)
    for target, roundings in (("cpu", "cpu"), ("cuda:sm_90", "gpu"),
                              ("rocm:gfx942", "gpu")):
        text, _ = _mlir_text(model, (x,), target)
        assert text == ke.import_torch(model, (x,), roundings=roundings)


def test_unknown_roundings_are_rejected():
    with pytest.raises(ValueError, match="roundings must be"):
        _conv_text("tpu")

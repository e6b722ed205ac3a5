"""The CPU lowering computes exp, expm1, tanh, log, log1p and log2 of f32
with upstream's polynomial approximations (ke-expand-math: LLVM would call
libm once per element of a vectorized tile). Each is checked here per
element against the float64 result, over the ranges models feed them, so a
lost bit of accuracy fails however the rest of the tensor averages out."""

import pytest
import torch

import ke

# Largest relative error per element, in units of f32's epsilon (1.19e-7).
# Measured on 2026-11-29 over these inputs: ke 0.6 (exp, log, log2) to 1.2
# (expm1, log1p) and 2.0 (tanh), PyTorch's f32 0.5-0.6. Where the exact
# result is tiny, the error is taken relative to 1e-30.
MAX_ULPS = 4
EPS = torch.finfo(torch.float32).eps


def _inputs(low, high, n=4099):
    # Uniform and log-spaced values of both signs within [low, high], plus
    # the ends: 4099 elements, so vector tiles end in a remainder.
    uniform = torch.linspace(low, high, n // 2, dtype=torch.float64)
    magnitude = torch.logspace(-8, 2, n - n // 2, dtype=torch.float64)
    spread = torch.cat([magnitude, -magnitude])[: n - n // 2]
    values = torch.cat([uniform, spread.clamp(low, high)])
    return values.float().reshape(1, n)


class _Unary(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


CASES = {
    "exp": (torch.exp, -87.0, 88.0),
    "expm1": (torch.expm1, -87.0, 88.0),
    "tanh": (torch.tanh, -20.0, 20.0),
    "log": (torch.log, 1e-30, 1e30),
    "log1p": (torch.log1p, -0.999, 1e30),
    "log2": (torch.log2, 1e-30, 1e30),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_approximation_is_within_a_few_ulp(name):
    fn, low, high = CASES[name]
    x = _inputs(low, high)
    if low > 0:
        x = x.abs().clamp(min=low)
    if name == "log1p":
        x = x.clamp(min=low)
    compiled = ke.compile(_Unary(fn), (x,))
    got = compiled(x).double()
    exact = fn(x.double())
    ulps = (got - exact).abs() / (exact.abs().clamp(min=1e-30) * EPS)
    worst = int(ulps.argmax())
    assert ulps.max().item() <= MAX_ULPS, (
        "%s(%r) = %r, exact %r: %.1f ulp" % (
            name, x.flatten()[worst].item(), got.flatten()[worst].item(),
            exact.flatten()[worst].item(), ulps.max().item()))

"""PyTorch modules imported with ke.import_torch, compiled with ke.compile
for this CPU (default schedules) and called: the result must match eager
PyTorch within the tolerance of ke's own checks."""

import pytest
import torch

import ke
from conftest import TOLERANCE, relative_error
from zoo import MODELS


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_matches_pytorch(name):
    model, inputs = MODELS[name]()
    model.eval()
    with torch.no_grad():
        expected = model(*inputs)
    compiled = ke.compile(ke.import_torch(model, inputs))
    actual = compiled(*inputs)
    if isinstance(expected, torch.Tensor):
        expected, actual = (expected,), (actual,)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape and a.dtype == e.dtype
        assert relative_error(a, e) <= TOLERANCE[e.dtype], name


def test_compile_takes_a_module():
    model, inputs = MODELS["mlp"]()
    compiled = ke.compile(model, inputs)
    with torch.no_grad():
        expected = model(*inputs)
    assert relative_error(compiled(*inputs), expected) <= 1e-4
    assert "remark: ke:" in compiled.remarks
    assert [a.shape for a in compiled.inputs] == [(4, 16)]
    assert [(a.shape, a.element_type) for a in compiled.results] == [
        ((4, 8), "f32")]


def test_import_keeps_training_mode():
    model, inputs = MODELS["conv_bn_relu"]()
    model.train()
    text = ke.import_torch(model, inputs)
    assert model.training
    assert "dense_resource" in text  # weights inlined
    assert model.training  # the mode is restored


def test_calls_write_fresh_outputs_and_leave_inputs():
    model, inputs = MODELS["linear"]()
    compiled = ke.compile(model, inputs)
    before = inputs[0].clone()
    first, second = compiled(*inputs), compiled(*inputs)
    assert first.data_ptr() != second.data_ptr()
    assert torch.equal(first, second)
    assert torch.equal(inputs[0], before)


class _Where(torch.nn.Module):
    def forward(self, x, mask):
        return torch.where(mask, x, torch.zeros_like(x))


class _Positive(torch.nn.Module):
    def forward(self, x):
        return x > 0


def test_bool_inputs_and_outputs_are_a_byte_per_element():
    # A vectorized kernel once read a bool mask's first byte as eight
    # elements and wrote `x > 0` as packed bits.
    torch.manual_seed(0)
    x = torch.randn(16, 64)
    mask = torch.rand(16, 64) > 0.5
    where = ke.compile(ke.import_torch(_Where(), (x, mask)))
    assert torch.equal(where(x, mask), _Where()(x, mask))
    positive = ke.compile(ke.import_torch(_Positive(), (x,)))
    out = positive(x)
    assert out.dtype == torch.bool
    assert torch.equal(out, x > 0)

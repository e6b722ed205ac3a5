"""ke.import_torch's weights and modes: weights as function arguments (in
ke.model_weights order, imported from the meta device too), one
training-mode forward with the running statistics dropped, and GroupNorm
without torch's as_strided decomposition. Each compiled model is checked
against eager PyTorch."""

import copy

import pytest
import torch
from torch import nn

import ke
from conftest import TOLERANCE, relative_error
from zoo import MODELS


def _check(actual, expected):
    if isinstance(expected, torch.Tensor):
        expected, actual = (expected,), (actual,)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape and a.dtype == e.dtype
        assert relative_error(a, e) <= TOLERANCE[e.dtype]


@pytest.mark.parametrize("name", ["mlp", "conv_bn_relu", "attention",
                                  "layernorm", "residual"])
def test_weights_as_arguments(name):
    model, inputs = MODELS[name]()
    model.eval()
    with torch.no_grad():
        expected = model(*inputs)
    text = ke.import_torch(model, inputs, weights="arguments")
    assert "dense_resource" not in text
    compiled = ke.compile(text)
    weights = ke.model_weights(model)
    assert [tuple(a.shape) for a in compiled.inputs] == (
        [tuple(x.shape) for x in inputs] + [tuple(w.shape) for w in weights])
    _check(compiled(*inputs, *weights), expected)
    # The weights are read at each call, not baked in: new weights, new
    # result.
    with torch.no_grad():
        for w in weights:
            if w.is_floating_point():
                w.mul_(0.5)
        expected = model(*inputs)
    _check(compiled(*inputs, *weights), expected)


def test_weights_from_the_meta_device():
    model, inputs = MODELS["conv_bn_relu"]()
    meta = copy.deepcopy(model).to("meta")
    text = ke.import_torch(meta, tuple(x.to("meta") for x in inputs),
                           weights="arguments")
    assert text == ke.import_torch(model, inputs, weights="arguments")


def test_training_mode_uses_batch_statistics():
    model, inputs = MODELS["conv_bn_relu"]()
    model.eval()
    running_mean = model[1].running_mean.clone()
    compiled = ke.compile(ke.import_torch(model, inputs, training=True))
    # Import neither runs the model nor changes its mode.
    assert not model.training
    assert torch.equal(model[1].running_mean, running_mean)
    model.train()
    with torch.no_grad():
        expected = model(*inputs)
        eval_result = model.eval()(*inputs)
    _check(compiled(*inputs), expected)  # one result: the statistics are dropped
    assert relative_error(eval_result, expected) > 1e-2  # the modes differ


def test_training_mode_with_weights_as_arguments():
    model, inputs = MODELS["residual"]()
    text = ke.import_torch(model, inputs, weights="arguments", training=True)
    model.train()
    with torch.no_grad():
        expected = model(*inputs)
    _check(ke.compile(text)(*inputs, *ke.model_weights(model)), expected)


def test_group_norm_without_a_gather():
    model, inputs = nn.GroupNorm(2, 8), (torch.randn(2, 8, 4, 4),)
    text = ke.import_torch(model, inputs)
    # torch's decomposition (as_strided) would read through tensor.extract
    # with an i64 index tensor the size of the output.
    assert "tensor.extract " not in text and "xi64>" not in text
    with torch.no_grad():
        expected = model(*inputs)
    _check(ke.compile(text)(*inputs), expected)


def test_bad_weights_mode():
    model, inputs = MODELS["linear"]()
    with pytest.raises(ValueError, match="weights must be"):
        ke.import_torch(model, inputs, weights="resources")

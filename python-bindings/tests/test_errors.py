"""What ke refuses, each with a clear exception: bad arguments to a compiled
model, models the importer or ke cannot take, bad MLIR."""

import pytest
import torch
from torch import nn

import ke


@pytest.fixture(scope="module")
def linear():
    model = nn.Linear(8, 4)
    return model, ke.compile(model, (torch.randn(3, 8),))


def test_non_contiguous_input(linear):
    _, compiled = linear
    x = torch.randn(8, 3).t()
    with pytest.raises(ke.CallError, match="input 0 is not contiguous"):
        compiled(x)
    compiled(x.contiguous())  # the fix the message names


def test_wrong_shape_dtype_count_and_type(linear):
    _, compiled = linear
    with pytest.raises(ke.CallError, match=r"has shape \[3, 9\], expected \[3, 8\]"):
        compiled(torch.randn(3, 9))
    with pytest.raises(ke.CallError, match="dtype torch.float64"):
        compiled(torch.randn(3, 8, dtype=torch.float64))
    with pytest.raises(ke.CallError, match="takes 1 inputs, got 2"):
        compiled(torch.randn(3, 8), torch.randn(3, 8))
    with pytest.raises(ke.CallError, match="list"):
        compiled([[0.0] * 8] * 3)


def test_scan_op_is_refused_with_its_location():
    class CumSum(nn.Module):
        def forward(self, x):
            return torch.cumsum(x, dim=1)

    with pytest.raises(ke.TorchImportError) as error:
        ke.import_torch(CumSum(), (torch.randn(2, 8),))
    assert "tm_tensor.scan" in str(error.value)
    assert "test_errors.py" in str(error.value)  # the source location


def test_dynamic_shapes_are_refused():
    text = """
    func.func @forward(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
      return %a : tensor<?x4xf32>
    }"""
    with pytest.raises(ke.CompileError, match="dynamic shapes are not supported"):
        ke.compile(text)


def test_bad_mlir_gets_located_errors():
    with pytest.raises(ke.CompileError, match=r"input.mlir:1:\d+: error"):
        ke.compile("func.func @forward(%a: tensor<4xf32>")


def test_unknown_gpu_targets_are_compile_errors():
    model = nn.Linear(8, 4)
    with pytest.raises(ke.CompileError, match="gfx123"):
        ke.compile(model, (torch.randn(3, 8),), target="rocm:gfx123")


def test_missing_database():
    model = nn.Linear(8, 4)
    with pytest.raises(ke.CompileError, match="no-such.db"):
        ke.compile(model, (torch.randn(3, 8),), db="/nonexistent/no-such.db")


def test_load_of_a_bad_file(tmp_path):
    path = tmp_path / "model.kem"
    path.write_text("not a model")
    with pytest.raises(ke.KeError, match="not a module saved by ke"):
        ke.load(path)

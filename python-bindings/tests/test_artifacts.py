"""Saving and loading compiled models, numpy arrays, several functions."""

import subprocess
import sys

import numpy
import torch
from torch import nn

import ke
from conftest import relative_error

TWO_FUNCTIONS = """
func.func @double(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.add ins(%a, %a : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
func.func @rowsum(%a: tensor<2x3xf64>) -> tensor<2xf64> {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<2xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<2xf64>) -> tensor<2xf64>
  %r = linalg.reduce ins(%a : tensor<2x3xf64>) outs(%f : tensor<2xf64>) dimensions = [1]
    (%x: f64, %acc: f64) { %s = arith.addf %x, %acc : f64
                           linalg.yield %s : f64 }
  return %r : tensor<2xf64>
}
"""


def test_save_and_load(tmp_path):
    model = nn.Sequential(nn.Linear(6, 5), nn.Tanh())
    x = torch.randn(2, 6)
    compiled = ke.compile(model, (x,))
    path = tmp_path / "model.kem"
    compiled.save(path)
    loaded = ke.load(path)
    assert torch.equal(loaded(x), compiled(x))
    with torch.no_grad():
        assert relative_error(loaded(x), model(x)) <= 1e-4
    assert loaded.remarks == ""


def test_load_in_a_fresh_process(tmp_path):
    # A process that loads without compiling first (the GPU machine's
    # pattern, and KernelBench's harness) must set up LLVM itself.
    model = nn.Sequential(nn.Linear(6, 5), nn.Tanh())
    x = torch.randn(2, 6)
    compiled = ke.compile(model, (x,))
    compiled.save(tmp_path / "model.kem")
    torch.save(x, tmp_path / "x.pt")
    script = (
        "import sys, torch, ke\n"
        "y = ke.load(sys.argv[1] + '/model.kem')(torch.load(sys.argv[1] + '/x.pt'))\n"
        "torch.save(y, sys.argv[1] + '/y.pt')\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert torch.equal(torch.load(tmp_path / "y.pt"), compiled(x))


def test_numpy_arrays_and_several_functions(tmp_path):
    compiled = ke.compile(TWO_FUNCTIONS)
    assert sorted(compiled.functions) == ["double", "rowsum"]
    a = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    doubled = compiled.functions["double"](a)
    assert isinstance(doubled, numpy.ndarray)
    numpy.testing.assert_array_equal(doubled, 2 * a)
    b = numpy.arange(6, dtype=numpy.float64).reshape(2, 3)
    numpy.testing.assert_allclose(compiled.functions["rowsum"](b), [3.0, 12.0])
    rowsum = compiled.functions["rowsum"]
    assert [(r.shape, r.element_type) for r in rowsum.results] == [((2,), "f64")]


def test_mlir_file_path(tmp_path):
    path = tmp_path / "two.mlir"
    path.write_text(TWO_FUNCTIONS)
    compiled = ke.compile(str(path))
    assert "two.mlir" in compiled.remarks


def test_versions():
    assert ke.version().startswith(ke.__version__)
    assert ke.llvm_version().startswith("22.")

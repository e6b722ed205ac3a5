"""GPU models (ke.compile for cuda targets, ke.load of a model library),
as far as this machine goes without a GPU: the library is written, its
signature read, and calls without CUDA tensors are clear errors. The calls
on a GPU run in benchmarks/gpu/models.py on the GPU machine."""

import os

import pytest

import ke

LINEAR_RELU = os.path.join(os.path.dirname(__file__), "..", "..", "test",
                           "Inputs", "linear-relu.mlir")


def test_compile_for_cuda_writes_a_model_library(tmp_path):
    model = ke.compile(LINEAR_RELU, target="cuda:sm_90")
    assert isinstance(model, ke.GpuModel)
    assert model.inputs == [((64, 128), "f32"), ((256, 128), "f32"),
                            ((256,), "f32")]
    assert model.results == [((64, 256), "f32")]
    assert model.signature["target"] == "cuda:sm_90"
    assert "applied the default schedule gpu.tile" in model.remarks
    path = tmp_path / "linear_relu.so"
    model.save(path)
    loaded = ke.load(path)
    assert isinstance(loaded, ke.GpuModel)
    assert loaded.signature == model.signature


def test_compile_for_rocm_writes_a_model_library(tmp_path):
    # HSACO images in the library, run through the HIP runtime (not run here:
    # no AMD GPU; without HIP, the C ABI's error is tested in lit).
    model = ke.compile(LINEAR_RELU, target="rocm:gfx942")
    assert isinstance(model, ke.GpuModel)
    assert model.signature["target"] == "rocm:gfx942"
    assert model.results == [((64, 256), "f32")]
    path = tmp_path / "linear_relu_rocm.so"
    model.save(path)
    assert ke.load(path).signature == model.signature


def test_gpu_models_take_cuda_tensors():
    import torch
    model = ke.compile(LINEAR_RELU, target="cuda:sm_90")
    with pytest.raises(ke.CallError, match="takes CUDA tensors"):
        model(torch.zeros(64, 128), torch.zeros(256, 128), torch.zeros(256))
    with pytest.raises(ke.CallError, match="takes 3 inputs"):
        model(torch.zeros(64, 128))


def test_gpu_compile_errors_are_compile_errors():
    splat = os.path.join(os.path.dirname(LINEAR_RELU), "splat-model.mlir")
    with pytest.raises(ke.CompileError, match="tensor.splat has no GPU lowering"):
        ke.compile(splat, target="cuda:sm_90")

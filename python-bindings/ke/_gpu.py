"""Models compiled by ke for a CUDA GPU: one shared library each.

`ke-opt compile MODEL --target cuda:sm_XX -o MODEL.so` writes a library
with the C ABI of include/ke-c/ke_model.h (docs/compile.md): every kernel
group with its tuned schedule and the glue between them, needing only libc
and the CUDA driver where it runs. GpuModel calls one on CUDA tensors with
ctypes, on PyTorch's current stream, so a model compiled on a machine with
ke can be carried to a GPU machine that has only PyTorch.
"""

import ctypes
import json
import os
import shutil
import subprocess
import tempfile
import weakref

from ke._compiled import _torch_dtypes
from ke._errors import CallError, CompileError, KeError
from ke._library import find_ke_opt


def _torch_dtype(torch, name):
    dtypes = _torch_dtypes()
    if name not in dtypes:
        raise KeError("element type %s has no torch dtype" % name)
    return dtypes[name]


def is_gpu_model(path):
    """Whether `path` is a shared library (the ELF magic), as GPU models are;
    ke's CPU artifacts are not."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


class GpuModel:
    """A model compiled by ke for a CUDA GPU. Call it like the model: it
    takes contiguous CUDA torch tensors of its inputs' shapes and dtypes and
    returns new ones (a tuple for several results), computed on the current
    stream. `.save(path)` copies the library; `ke.load(path)` loads it."""

    def __init__(self, path, remarks=""):
        self.path = os.fspath(path)
        self._lib = ctypes.CDLL(self.path)
        self._lib.ke_model_signature.restype = ctypes.c_char_p
        self._lib.ke_model_last_error.restype = ctypes.c_char_p
        self._lib.ke_model_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        if self._lib.ke_model_abi_version() != 1:
            raise KeError("%s has ABI %d; this ke reads 1" %
                          (path, self._lib.ke_model_abi_version()))
        self.signature = json.loads(self._lib.ke_model_signature())
        #: Which schedule each workload got and why (ke's remarks).
        self.remarks = remarks

    @property
    def inputs(self):
        """The inputs (shape, element type) of the model's function."""
        return [(tuple(i["shape"]), i["dtype"]) for i in self.signature["inputs"]]

    @property
    def results(self):
        """The results (shape, element type) of the model's function."""
        return [(tuple(o["shape"]), o["dtype"]) for o in self.signature["outputs"]]

    def __call__(self, *tensors):
        import torch
        if len(tensors) != len(self.inputs):
            raise CallError("%s takes %d inputs, got %d" %
                            (self.signature["name"], len(self.inputs),
                             len(tensors)))
        device = None
        for index, (tensor, (shape, dtype)) in enumerate(zip(tensors, self.inputs)):
            if not isinstance(tensor, torch.Tensor) or not tensor.is_cuda:
                raise CallError("input #%d: a GPU model takes CUDA tensors" % index)
            if not tensor.is_contiguous():
                raise CallError("input #%d is not contiguous" % index)
            if tuple(tensor.shape) != shape or tensor.dtype != _torch_dtype(torch, dtype):
                raise CallError("input #%d is %s %s, the model takes %s %s" %
                                (index, tuple(tensor.shape), tensor.dtype,
                                 shape, dtype))
            device = device or tensor.device
        if device is None:
            device = torch.device("cuda")
        outputs = [torch.empty(shape, dtype=_torch_dtype(torch, dtype), device=device)
                   for shape, dtype in self.results]
        pointers = (ctypes.c_void_p * (len(tensors) + len(outputs)))(
            *[t.data_ptr() for t in list(tensors) + outputs])
        with torch.cuda.device(device):
            stream = torch.cuda.current_stream().cuda_stream
            if self._lib.ke_model_run(ctypes.c_void_p(stream), pointers):
                raise CallError(self._lib.ke_model_last_error().decode())
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def save(self, path):
        """Copies the model's library to `path`."""
        shutil.copyfile(self.path, path)


def compile_gpu(text, name, target, db):
    """`ke-opt compile` of MLIR `text` for GPU `target` into a library."""
    work = tempfile.mkdtemp(prefix="ke-gpu-model-")
    source = os.path.join(work, name)
    library = os.path.join(work, os.path.splitext(name)[0] + ".so")
    with open(source, "w") as f:
        f.write(text)
    command = [os.fspath(find_ke_opt()), "compile", source, "--target",
               target, "--emit=so", "-o", library]
    if db:
        command += ["--db", os.fspath(db)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise CompileError(done.stderr.strip() or "ke-opt compile failed")
    model = GpuModel(library, remarks=done.stderr)
    # The library file stays while the model lives (save() copies it).
    weakref.finalize(model, shutil.rmtree, work, True)
    return model

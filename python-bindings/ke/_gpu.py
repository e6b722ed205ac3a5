"""Models compiled by ke for a CUDA (or ROCm) GPU: one shared library each.

`ke-opt compile MODEL --target cuda:sm_XX -o MODEL.so` writes a library
with the C ABI of include/ke-c/ke_model.h (docs/compile.md): every kernel
group with its tuned schedule and the glue between them, needing only libc
and the CUDA driver where it runs (for rocm:gfxNNN, the HIP runtime;
PyTorch's ROCm build names its tensors and streams "cuda" too). GpuModel calls one on CUDA tensors with
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
    stream. `.save(path)` copies the library; `ke.load(path)` loads it.
    The device memory it takes stays until `.release()` (or the end of a
    `with` block): the library keeps it for the life of the process
    otherwise, since several GpuModels of one file share it."""

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

    def _prepare(self):
        """What each call needs, computed once: the torch dtypes and shapes
        of the inputs and outputs, and the pointer array type."""
        import torch
        self._torch = torch
        self._input_types = [(shape, _torch_dtype(torch, dtype))
                             for shape, dtype in self.inputs]
        self._output_types = [(shape, _torch_dtype(torch, dtype))
                              for shape, dtype in self.results]
        self._pointers = ctypes.c_void_p * (len(self._input_types) +
                                            len(self._output_types))

    def __call__(self, *tensors):
        if not hasattr(self, "_torch"):
            self._prepare()
        torch = self._torch
        if len(tensors) != len(self._input_types):
            raise CallError("%s takes %d inputs, got %d" %
                            (self.signature["name"], len(self._input_types),
                             len(tensors)))
        for index, (tensor, (shape, dtype)) in enumerate(
                zip(tensors, self._input_types)):
            if not isinstance(tensor, torch.Tensor) or not tensor.is_cuda:
                raise CallError("input #%d: a GPU model takes CUDA tensors" % index)
            if not tensor.is_contiguous():
                raise CallError("input #%d is not contiguous" % index)
            if tensor.dtype != dtype or tuple(tensor.shape) != shape:
                raise CallError("input #%d is %s %s, the model takes %s %s" %
                                (index, tuple(tensor.shape), tensor.dtype,
                                 shape, dtype))
        device = tensors[0].device if tensors else torch.device(
            "cuda", torch.cuda.current_device())
        outputs = [torch.empty(shape, dtype=dtype, device=device)
                   for shape, dtype in self._output_types]
        pointers = self._pointers(*[t.data_ptr() for t in tensors],
                                  *[t.data_ptr() for t in outputs])
        if device.index is not None and device.index != torch.cuda.current_device():
            # The library runs in the calling thread's current context.
            with torch.cuda.device(device):
                return self._run(device, pointers, outputs)
        return self._run(device, pointers, outputs)

    def _run(self, device, pointers, outputs):
        stream = self._torch.cuda.current_stream(device).cuda_stream
        if self._lib.ke_model_run(stream, pointers):
            raise CallError(self._lib.ke_model_last_error().decode())
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def save(self, path):
        """Copies the model's library to `path`."""
        shutil.copyfile(self.path, path)

    def release(self):
        """Frees the device memory the model's first call took (its code,
        constants and temporaries) once its work is done; a later call
        loads again. Libraries older than ke_model_release keep theirs
        until the process ends. Also the end of a `with` block."""
        release = getattr(self._lib, "ke_model_release", None)
        if release is not None and release():
            raise CallError(self._lib.ke_model_last_error().decode())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


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

"""Compiled models: ke.compile, ke.load and CompiledModel.

A CompiledModel owns a ke_module of the C API: the object code of a module
compiled for this CPU, linked into a JIT. Calls pass memref descriptors
that point at the caller's tensors and at freshly allocated outputs (the
C API compiles results as out-parameters), so nothing is copied.
"""

import ctypes
import os
from pathlib import Path

from ke._errors import CallError, CompileError, KeError
from ke._library import check, lib

# Element type names of the C API -> numpy dtype names and torch dtypes.
_NUMPY_DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16",
                 "bf16": "bfloat16", "i1": "bool", "i8": "int8",
                 "i16": "int16", "i32": "int32", "i64": "int64"}


def _torch_dtypes():
    import torch
    return {"f32": torch.float32, "f64": torch.float64,
            "f16": torch.float16, "bf16": torch.bfloat16, "i1": torch.bool,
            "i8": torch.int8, "i16": torch.int16, "i32": torch.int32,
            "i64": torch.int64}


def _numpy_dtype(element_type):
    import numpy
    if element_type == "bf16":
        import ml_dtypes  # numpy has no bfloat16 of its own
        return numpy.dtype(ml_dtypes.bfloat16)
    return numpy.dtype(_NUMPY_DTYPES[element_type])


def _is_torch_tensor(value):
    module = type(value).__module__
    return module.startswith("torch") and hasattr(value, "data_ptr")


class Argument:
    """One argument of a compiled function: shape and element type."""

    def __init__(self, shape, element_type):
        self.shape = tuple(shape)
        self.element_type = element_type

    def __repr__(self):
        return "Argument(shape=%s, element_type=%r)" % (self.shape,
                                                        self.element_type)

    def to_dict(self):
        return {"shape": list(self.shape), "dtype": self.element_type}


class Function:
    """A function of a compiled module; called by CompiledModel."""

    def __init__(self, module, name, handle):
        self._module = module  # keeps the code alive
        self.name = name
        self._handle = handle
        c = lib()
        count = (c.ke_function_get_num_inputs(handle) +
                 c.ke_function_get_num_results(handle))
        arguments = []
        for i in range(count):
            rank = c.ke_function_get_arg_rank(handle, i)
            shape = c.ke_function_get_arg_shape(handle, i)
            arguments.append(Argument(
                [shape[d] for d in range(rank)],
                c.ke_function_get_arg_element_type(handle, i).decode()))
        self.inputs = arguments[:c.ke_function_get_num_inputs(handle)]
        self.results = arguments[len(self.inputs):]

    def _descriptor(self, value, argument, what):
        """The memref descriptor of `value` (no copy), after checking it."""
        if _is_torch_tensor(value):
            if value.device.type != "cpu":
                raise CallError("%s is on %s; ke compiled this model for the "
                                "CPU" % (what, value.device))
            dtype = _torch_dtypes()[argument.element_type]
            if value.dtype != dtype:
                raise CallError("%s has dtype %s, expected %s" %
                                (what, value.dtype, dtype))
            shape, contiguous = tuple(value.shape), value.is_contiguous()
            pointer = value.data_ptr()
        elif hasattr(value, "__array_interface__"):
            dtype = _numpy_dtype(argument.element_type)
            if value.dtype != dtype:
                raise CallError("%s has dtype %s, expected %s" %
                                (what, value.dtype, dtype))
            shape = tuple(value.shape)
            contiguous = value.flags["C_CONTIGUOUS"]
            pointer = value.__array_interface__["data"][0]
        else:
            raise CallError("%s is a %s; ke takes torch tensors and numpy "
                            "arrays" % (what, type(value).__name__))
        if shape != argument.shape:
            raise CallError("%s has shape %s, expected %s" %
                            (what, list(shape), list(argument.shape)))
        if not contiguous:
            raise CallError("%s is not contiguous; pass .contiguous() (torch) "
                            "or numpy.ascontiguousarray(...)" % what)
        rank = len(shape)
        strides, stride = [0] * rank, 1
        for d in reversed(range(rank)):
            strides[d] = stride
            stride *= shape[d]
        return (ctypes.c_int64 * (3 + 2 * rank))(
            pointer or 0, pointer or 0, 0, *shape, *strides)

    def __call__(self, *args):
        if len(args) != len(self.inputs):
            raise CallError("%s takes %d inputs, got %d" %
                            (self.name, len(self.inputs), len(args)))
        use_torch = any(_is_torch_tensor(a) for a in args) or (
            not args and _torch_available())
        if use_torch:
            import torch
            dtypes = _torch_dtypes()
            outputs = [torch.empty(r.shape, dtype=dtypes[r.element_type])
                       for r in self.results]
        else:
            import numpy
            outputs = [numpy.empty(r.shape, dtype=_numpy_dtype(r.element_type))
                       for r in self.results]
        descriptors = [
            self._descriptor(a, t, "input %d" % i)
            for i, (a, t) in enumerate(zip(args, self.inputs))]
        descriptors += [
            self._descriptor(o, t, "result %d" % i)
            for i, (o, t) in enumerate(zip(outputs, self.results))]
        pointers = (ctypes.c_void_p * len(descriptors))(
            *[ctypes.addressof(d) for d in descriptors])
        check(lib().ke_function_call(self._handle, pointers,
                                     len(descriptors)), CallError)
        if len(outputs) == 1:
            return outputs[0]
        return tuple(outputs)


def _torch_available():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


class CompiledModel:
    """A model compiled by ke for this CPU. Call it like the model: it takes
    contiguous CPU torch tensors (or numpy arrays) of the example inputs'
    shapes and dtypes, and returns new tensors (a tuple for several
    results). `.save(path)` writes it; `ke.load(path)` reads it back."""

    def __init__(self, handle):
        self._handle = ctypes.c_void_p(handle)
        c = lib()
        # Kept for __del__, which may run while Python shuts down.
        self._destroy = c.ke_module_destroy
        self.functions = {}
        for i in range(c.ke_module_get_num_functions(self._handle)):
            name = c.ke_module_get_function_name(self._handle, i).decode()
            function = ctypes.c_void_p()
            check(c.ke_module_lookup(self._handle, name.encode(),
                                     ctypes.byref(function)))
            self.functions[name] = Function(self, name, function)
        #: Which schedule each workload got and why (ke's remarks).
        self.remarks = (c.ke_module_get_remarks(self._handle) or b"").decode()

    def _only_function(self):
        if len(self.functions) != 1:
            raise CallError("the module has functions %s: call "
                            "model.functions[name]" % sorted(self.functions))
        return next(iter(self.functions.values()))

    @property
    def inputs(self):
        """The inputs (shape, element type) of the model's function."""
        return self._only_function().inputs

    @property
    def results(self):
        """The results (shape, element type) of the model's function."""
        return self._only_function().results

    def __call__(self, *args):
        return self._only_function()(*args)

    def save(self, path):
        """Writes the compiled code and signatures to `path`."""
        check(lib().ke_module_save(self._handle, os.fsencode(path)))

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle and getattr(self, "_destroy", None):
            self._destroy(handle)
            self._handle = None


def _mlir_text(model_or_mlir, example_inputs, target):
    """MLIR text from text, a path to a .mlir file, or an nn.Module (with
    the 16-bit roundings of eager PyTorch on `target`'s kind of device)."""
    if isinstance(model_or_mlir, Path) or (
            isinstance(model_or_mlir, str) and model_or_mlir.endswith(".mlir")
            and "\n" not in model_or_mlir and os.path.isfile(model_or_mlir)):
        path = Path(model_or_mlir)
        return path.read_text(), path.name
    if isinstance(model_or_mlir, str):
        return model_or_mlir, "input.mlir"
    if example_inputs is None:
        raise KeError("a PyTorch model needs example_inputs")
    from ke._torch import import_torch
    name = "%s.mlir" % type(model_or_mlir).__name__
    roundings = "gpu" if is_gpu_target(target) else "cpu"
    return import_torch(model_or_mlir, example_inputs,
                        roundings=roundings), name


def is_gpu_target(target):
    """True for the cuda: and rocm: targets."""
    return bool(target) and target.startswith(("cuda:", "rocm:"))


def compile(model_or_mlir, example_inputs=None, target="cpu", db=None):
    """Compiles MLIR text (linalg on tensors of static shapes), a .mlir file
    or a torch.nn.Module (imported with ke.import_torch on
    `example_inputs`, with the roundings of eager PyTorch on the target's
    kind of device) for `target` with the tuned schedules of the database
    `db` (None: default schedules): "cpu" (this machine) gives a
    CompiledModel, "cuda:sm_XX" a GpuModel (one shared library, called on
    CUDA tensors; compiled by ke-opt). Raises CompileError with ke's
    diagnostics."""
    text, name = _mlir_text(model_or_mlir, example_inputs, target)
    if is_gpu_target(target):
        from ke._gpu import compile_gpu
        return compile_gpu(text, name, target, db)
    data = text.encode()
    handle = ctypes.c_void_p()
    check(lib().ke_compile(data, len(data), name.encode(),
                           target.encode() if target else None,
                           os.fsencode(db) if db else None,
                           ctypes.byref(handle)), CompileError)
    return CompiledModel(handle.value)


def load(path):
    """Reads a model written by CompiledModel.save (on a machine with the
    same CPU), or a GPU model's library (GpuModel.save, or `ke-opt compile
    --target cuda:sm_XX -o MODEL.so`), which needs no libke.so."""
    from ke._gpu import GpuModel, is_gpu_model
    if is_gpu_model(path):
        return GpuModel(path)
    handle = ctypes.c_void_p()
    check(lib().ke_module_load(os.fsencode(path), ctypes.byref(handle)))
    return CompiledModel(handle.value)

"""ke: an auto-scheduler for MLIR, from Python.

A thin ctypes layer over ke's C API (libke.so, include/ke-c/ke.h) and its
driver (ke-opt): import a PyTorch module to linalg with torch-mlir, tune it,
compile it for this CPU or a CUDA GPU and call it on tensors without
copies. See
docs/python.md in the ke repository.
"""

from ke._errors import CallError, CompileError, KeError, TorchImportError
from ke._compiled import CompiledModel, compile, load
from ke._gpu import GpuModel
from ke._library import llvm_version, version
from ke._torch import import_torch, model_weights
from ke._tune import tune
from ke._database import Database
from ke._plot import plot_convergence

__all__ = [
    "CallError",
    "CompileError",
    "CompiledModel",
    "Database",
    "GpuModel",
    "KeError",
    "TorchImportError",
    "compile",
    "import_torch",
    "llvm_version",
    "load",
    "model_weights",
    "plot_convergence",
    "tune",
    "version",
]
__version__ = "0.1.0"

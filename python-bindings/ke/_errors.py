"""The exceptions of the ke package: every failure of ke itself is a KeError
carrying ke's message (for compile errors, MLIR's located diagnostics)."""


class KeError(Exception):
    """Base class of ke's errors."""


class CompileError(KeError):
    """MLIR that ke cannot compile, or a database it cannot read."""


class CallError(KeError, ValueError):
    """Arguments that do not fit a compiled function: wrong count, shape,
    element type or device, or a tensor that is not contiguous."""


class TorchImportError(KeError):
    """A PyTorch model that ke cannot take (yet): the message names the
    operation and its source location where torch-mlir knows them."""

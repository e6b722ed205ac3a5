"""PyTorch models to linalg on tensors with torch-mlir's FX importer.

The model is exported in eval mode (no dropout RNG state, batch norm reads
its running statistics) with torch.export, then lowered by torch-mlir to
linalg on tensors. Parameters and buffers become constants of the module
(`arith.constant dense_resource<...>` with the bytes in the file's resource
section): the function takes only the model's inputs. ke then rejects, with
the op and its source location, what it cannot compile yet: ops outside
upstream MLIR (torch-mlir's tm_tensor dialect, e.g. tm_tensor.scan from
torch.cumsum) and dynamic shapes.
"""

import re

from ke._errors import TorchImportError

# Dialects that torch-mlir can leave in "linalg-on-tensors" output and that
# ke does not take: tm_tensor (scan, scatter, sort, attention), leftover
# torch ops, and ml_program globals (RNG state of train-mode dropout).
_UNSUPPORTED_DIALECTS = ("tm_tensor", "torch", "torch_c", "ml_program")


def _require_torch():
    try:
        import torch
        from torch_mlir import fx
    except ImportError as error:
        raise TorchImportError(
            "ke.import_torch needs torch and torch-mlir: pip install "
            "'torch==2.*' torch-mlir ml_dtypes (scripts/setup-python.sh makes "
            "a venv with them): %s" % error) from error
    return torch, fx


def _walk(operation):
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                yield op
                yield from _walk(op.operation)


def _check_module(module):
    """Raises TorchImportError for what ke cannot compile."""
    for op in _walk(module.operation):
        name = op.operation.name
        if name.split(".")[0] in _UNSUPPORTED_DIALECTS:
            raise TorchImportError(
                "ke cannot compile '%s' (at %s): torch-mlir lowers it outside "
                "upstream MLIR's linalg, which ke takes" %
                (name, op.operation.location))
        if name == "func.func":
            signature = str(op.operation.attributes["function_type"])
            if re.search(r"\?", signature):
                raise TorchImportError(
                    "ke cannot compile dynamic shapes yet: %s has type %s (at "
                    "%s); export with static example inputs" %
                    (op.operation.attributes["sym_name"], signature,
                     op.operation.location))


def import_torch(model, example_inputs, func_name="forward"):
    """Imports `model` (a torch.nn.Module) called on `example_inputs` (a
    tensor or a tuple of tensors, whose shapes and dtypes become the
    function's) and returns linalg-on-tensors MLIR text with the weights
    inlined as constants. Raises TorchImportError naming the op and its
    source location for what ke cannot take."""
    torch, fx = _require_torch()
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    was_training = getattr(model, "training", False)
    model.eval()
    try:
        with torch.no_grad():
            module = fx.export_and_import(
                model, *example_inputs, output_type="linalg-on-tensors",
                func_name=func_name)
    except Exception as error:  # torch.export or a torch-mlir lowering
        raise TorchImportError("torch-mlir could not import %s: %s" %
                               (type(model).__name__, error)) from error
    finally:
        if was_training:
            model.train()
    _check_module(module)
    return module.operation.get_asm(enable_debug_info=True)

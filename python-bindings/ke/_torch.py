"""PyTorch models to linalg on tensors with torch-mlir's FX importer.

The model is exported with torch.export and lowered by torch-mlir to linalg
on tensors. By default it is exported in eval mode (no dropout RNG state,
batch norm reads its running statistics); `training=True` exports one
training-mode forward instead (batch norm normalises with the batch's own
statistics, as a freshly built KernelBench model does), and the updated
running statistics, which torch.export returns as extra results, are
dropped: the function returns what the model returns.

Weights: with `weights="inline"` (the default) parameters and buffers
become constants of the module (`arith.constant dense_resource<...>` with
the bytes in the file's resource section) and the function takes only the
model's inputs. With `weights="arguments"` the function takes the model's
inputs followed by `model_weights(model)`: its parameters, then its
buffers, in `named_parameters()` / `named_buffers()` order. The model may
then live on the meta device: no weight is read, so models whose weights
do not fit in memory import too.

ke then rejects, with the op and its source location, what it cannot
compile yet: ops outside upstream MLIR (torch-mlir's tm_tensor dialect,
e.g. tm_tensor.scan from torch.cumsum) and dynamic shapes.
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


def model_weights(model):
    """The tensors that a model imported with `weights="arguments"` takes
    after its inputs: `model`'s parameters, then its buffers, in
    `named_parameters()` / `named_buffers()` order (shared tensors once)."""
    return [tensor for _, tensor in _named_weights(model)]


def _named_weights(model):
    """(name, tensor) of the parameters, then the buffers."""
    return list(model.named_parameters()) + list(model.named_buffers())


# The values of import_torch's `roundings`.
ROUNDINGS = ("cpu", "gpu")


def _is_narrow(torch, tensor):
    """True for the 16-bit float types, whose eager ops compute in f32 and
    round once."""
    return tensor.dtype in (torch.float16, torch.bfloat16)


def _group_norm_in_f32(torch):
    """aten.native_group_norm of a 16-bit input as PyTorch's kernels compute
    it: in f32, the result rounded once. torch-mlir's own lowering keeps the
    input type and rounds the mean, the reciprocal deviation and each step
    of the normalisation to it; after a convolution (channels of similar
    values) those roundings moved bf16 results by up to 0.16 from eager's
    (KernelBench level 2, H100). f32 inputs return NotImplemented, which
    leaves the op to torch-mlir."""
    aten = torch.ops.aten

    def decomposition(x, weight, bias, n, c, hw, groups, eps):
        if not _is_narrow(torch, x):
            return NotImplemented

        def wide(t):
            return None if t is None else t.float()

        out, mean, rstd = aten.native_group_norm.default(
            wide(x), wide(weight), wide(bias), n, c, hw, groups, eps)
        return out.to(x.dtype), mean.to(x.dtype), rstd.to(x.dtype)

    return decomposition


def _group_norm_as_cuda(torch):
    """aten.native_group_norm of a 16-bit input as eager PyTorch computes it
    on CUDA: the statistics in f32, then stored in the input's type (the
    mean and reciprocal deviation are 16-bit tensors there), read back by a
    second kernel that computes y = a x + b in f32 per channel (a = rstd
    gamma, b = beta - a mean; (x - mean) rstd gamma + beta when each group
    holds one element per channel), rounded once. The rounded statistics
    are less accurate than f32 ones: on KernelBench's
    Conv2d_Add_Scale_Sigmoid_GroupNorm in bf16 (H200), eager's GroupNorm put
    53 million elements outside 1e-2 of the exact norm of its own input,
    f32 statistics none; KernelBench checks against eager, so a GPU import
    rounds as eager does. f32 inputs return NotImplemented."""
    aten = torch.ops.aten

    def decomposition(x, weight, bias, n, c, hw, groups, eps):
        if not _is_narrow(torch, x):
            return NotImplemented
        _, mean, rstd = aten.native_group_norm.default(
            x.float(), None, None, n, c, hw, groups, eps)
        mean, rstd = mean.to(x.dtype), rstd.to(x.dtype)

        def per_channel(stat):
            return (stat.float().reshape(n, groups, 1)
                    .expand(n, groups, c // groups).reshape(n, c, 1))

        m, r = per_channel(mean), per_channel(rstd)
        gamma = (weight.float().reshape(1, c, 1) if weight is not None
                 else None)
        beta = bias.float().reshape(1, c, 1) if bias is not None else None
        xs = x.float().reshape(n, c, hw)
        if hw == 1:
            y = (xs - m) * r
            if gamma is not None:
                y = y * gamma
            if beta is not None:
                y = y + beta
        else:
            a = r * gamma if gamma is not None else r
            b = -a * m
            if beta is not None:
                b = b + beta
            y = xs * a + b
        return y.reshape(x.shape).to(x.dtype), mean, rstd

    return decomposition


def _bias_after_rounding(torch):
    """aten.convolution of 16-bit operands with a bias as eager PyTorch runs
    it on GPUs: cuDNN (and MIOpen) write the convolution rounded to the
    16-bit type, then PyTorch adds the bias in a second kernel, which rounds
    again. torch-mlir accumulates the bias in the f32 init and rounds once,
    as oneDNN does on CPUs. Other convolutions return NotImplemented."""
    aten = torch.ops.aten

    def decomposition(x, weight, bias, stride, padding, dilation, transposed,
                      output_padding, groups):
        if bias is None or not _is_narrow(torch, x):
            return NotImplemented
        out = aten.convolution.default(x, weight, None, stride, padding,
                                       dilation, transposed, output_padding,
                                       groups)
        return out + bias.view([1, -1] + [1] * (out.dim() - 2))

    return decomposition


def _decompositions(roundings="cpu"):
    """torch-mlir's decomposition table without GroupNorm's: torch's
    decomposition goes through aten.as_strided, which torch-mlir lowers to
    a gather with an index constant the size of the output (a gigabyte for
    KernelBench's GroupNorm problems); torch-mlir lowers
    aten.native_group_norm itself, in f32 (16-bit inputs are widened
    first, _group_norm_in_f32). With `roundings="gpu"`, 16-bit
    convolutions add their bias after rounding (_bias_after_rounding) and
    16-bit group norms round their statistics (_group_norm_as_cuda), as
    eager PyTorch does on CUDA."""
    import torch
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    table = dict(get_decomposition_table())
    gpu = roundings == "gpu"
    table[torch.ops.aten.native_group_norm.default] = (
        _group_norm_as_cuda if gpu else _group_norm_in_f32)(torch)
    if gpu:
        table[torch.ops.aten.convolution.default] = _bias_after_rounding(
            torch)
    return table


def _export_module(model, example_inputs, weights, torch):
    """The module that torch.export traces, and the tensors it is called
    with: its forward takes the tensors among `example_inputs` (Python
    values are constants of the import, as the model sees them), then, for
    `weights="arguments"`, model_weights(model), which it passes to
    `model` with torch.func.functional_call so that torch.export sees the
    weights as inputs."""
    is_tensor = [isinstance(x, torch.Tensor) for x in example_inputs]
    tensors = tuple(x for x, t in zip(example_inputs, is_tensor) if t)
    names = ([name for name, _ in _named_weights(model)]
             if weights == "arguments" else [])
    if all(is_tensor) and not names:
        return model, tensors

    class Wrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            # Not a submodule: its tensors must not be the wrapper's state.
            object.__setattr__(self, "model", model)

        def forward(self, *args):
            given = iter(args[:len(tensors)])
            inputs = [next(given) if t else x
                      for x, t in zip(example_inputs, is_tensor)]
            if not names:
                return self.model(*inputs)
            return torch.func.functional_call(
                self.model, dict(zip(names, args[len(tensors):])),
                tuple(inputs))

    return Wrapper(), tensors + tuple(model_weights(model) if names else ())


def _user_output_indices(program):
    """The results of an ExportedProgram that the model returns (torch.export
    puts buffer and input mutations first)."""
    from torch.export.graph_signature import OutputKind
    return [i for i, spec in enumerate(program.graph_signature.output_specs)
            if spec.kind == OutputKind.USER_OUTPUT]


def _keep_results(module, func_name, keep):
    """Makes `func_name` in `module` return only its results at `keep`, then
    erases the computation that only the dropped results needed."""
    from torch_mlir import ir
    from torch_mlir.dialects import func as func_d
    for op in module.body.operations:
        if (op.operation.name == "func.func" and
                ir.StringAttr(op.attributes["sym_name"]).value == func_name):
            function = op
            break
    else:
        return
    block = function.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    values = [ret.operands[i] for i in keep]
    if len(values) == len(ret.operands):
        return
    with module.context, ir.InsertionPoint(ret), ret.location:
        func_d.ReturnOp(values)
        ret.erase()
        old = ir.FunctionType(
            ir.TypeAttr(function.attributes["function_type"]).value)
        function.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(old.inputs, [v.type for v in values]))
    _erase_dead_ops(block)


# Ops without side effects on tensors, which may go when nothing reads them.
_PURE_DIALECTS = ("arith", "math", "linalg", "tensor")


def _erase_dead_ops(block):
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.operations)):
            name = op.operation.name
            if (name.split(".")[0] in _PURE_DIALECTS and
                    len(op.results) > 0 and
                    all(not list(r.uses) for r in op.results)):
                op.operation.erase()
                changed = True


def import_torch(model, example_inputs, func_name="forward",
                 weights="inline", training=False, roundings="cpu"):
    """Imports `model` (a torch.nn.Module) called on `example_inputs` (a
    tensor or a tuple of tensors, whose shapes and dtypes become the
    function's; Python values among them, such as a scale factor, are
    constants of the import and not arguments) and returns
    linalg-on-tensors MLIR text.

    `weights`: "inline" makes the parameters and buffers constants of the
    module; "arguments" makes them arguments after the inputs, in
    `ke.model_weights(model)` order (the model and inputs may then be on
    the meta device). `training`: export one training-mode forward (batch
    norm with batch statistics; running statistics are not returned)
    instead of eval mode. `roundings`: where a 16-bit model rounds, as
    eager PyTorch does on "cpu" or on "gpu" (CUDA and ROCm: a
    convolution's bias is added after its result is rounded to the 16-bit
    type; on CPUs before). Raises TorchImportError naming the op and its
    source location for what ke cannot take."""
    torch, fx = _require_torch()
    if weights not in ("inline", "arguments"):
        raise ValueError("weights must be 'inline' or 'arguments', got %r" %
                         (weights,))
    if roundings not in ROUNDINGS:
        raise ValueError("roundings must be 'cpu' or 'gpu', got %r" %
                         (roundings,))
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    was_training = getattr(model, "training", False)
    model.train(training)
    try:
        with torch.no_grad():
            module, arguments = _export_module(model, example_inputs,
                                               weights, torch)
            program = torch.export.export(module, arguments)
            # Decomposed here, not by torch-mlir: only the decomposed
            # (functional) program lists the buffer mutations among its
            # results.
            program = program.run_decompositions(
                _decompositions(roundings))
            keep = _user_output_indices(program)
            module = fx.export_and_import(
                program, output_type="linalg-on-tensors",
                func_name=func_name, decomposition_table={})
    except Exception as error:  # torch.export or a torch-mlir lowering
        raise TorchImportError("torch-mlir could not import %s: %s" %
                               (type(model).__name__, error)) from error
    finally:
        model.train(was_training)
    _keep_results(module, func_name, keep)
    _check_module(module)
    return module.operation.get_asm(enable_debug_info=True)

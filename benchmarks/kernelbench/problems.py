"""KernelBench problem files: loading, shrinking for the CPU, building the
model and its inputs under KernelBench's seeds.

A problem file defines `class Model(nn.Module)`, `get_inputs()` and
`get_init_inputs()`; its sizes are module-level integer constants
(`batch_size = 128`, `height = width = 128`) that both functions read.

Scaling (`scale > 1`, the CPU correctness run): before the file runs, every
module-level assignment of an integer of 32 or more written with literals
(`dim = 393216`, `N = 2048 * 2`) becomes `max(16, value // scale)`. Expressions computed from those names
(`bias_shape = (out_channels, 1, 1)`) follow, since the edited file is what
runs. Kernel sizes, strides, paddings and dilations are below 32 and stay.
A problem whose sizes no longer fit together (a pooling window larger than
the shrunken input) fails to build and is reported as such.
"""

import ast
import os
import re

# KernelBench's seed for building the model (src/kernelbench/eval.py).
MODEL_SEED = 42

# Problem-name words -> op kind, first match wins (the per-kind breakdown).
_KINDS = [
    ("conv-transpose", r"ConvTranspose|conv_transpose|Transposed_Conv"),
    ("convolution", r"[Cc]onv"),
    ("matmul", r"[Mm]atmul|Gemm|[Mm]atrix|MM_|Bmm|bmm|Linear|Dense"),
    ("norm", r"Norm|norm"),
    ("softmax", r"[Ss]oftmax|LogSumExp"),
    ("pooling", r"Pool|pool"),
    ("loss", r"Loss|loss|Divergence"),
    ("scan", r"[Cc]umsum|[Cc]umprod|cumulative|Scan"),
    ("reduction", r"Sum|Mean|Max|Min|Argmax|Argmin|Product|reduction|Reduction"),
]


def op_kind(name):
    """The op kind of a problem, from its name (level-2 problems by their
    first op, the anchor)."""
    for kind, pattern in _KINDS:
        if re.search(pattern, name):
            return kind
    return "elementwise"


class Problem:
    """One KernelBench problem file."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.level = os.path.basename(os.path.dirname(self.path))
        self.file = os.path.basename(self.path)
        stem = self.file[:-3]
        #: "level1/23_Softmax": unique across levels, used for file names.
        self.name = "%s/%s" % (self.level, stem)
        self.kind = op_kind(stem.split("_", 1)[-1])

    @property
    def slug(self):
        """The name as a file name."""
        return self.name.replace("/", "__")

    def load(self, scale=1):
        """The problem's namespace (Model, get_inputs, get_init_inputs),
        after scaling its integer sizes down by `scale`."""
        with open(self.path) as f:
            source = f.read()
        tree = ast.parse(source, self.path)
        if scale > 1:
            tree = _ScaleSizes(scale).visit(tree)
            ast.fix_missing_locations(tree)
        namespace = {"__name__": "kernelbench_problem", "__file__": self.path}
        exec(compile(tree, self.path, "exec"), namespace)
        for needed in ("Model", "get_inputs", "get_init_inputs"):
            if needed not in namespace:
                raise ValueError("%s defines no %s" % (self.path, needed))
        return namespace


def _constant_int(node):
    """The value of an integer expression of literals (`2048 * 2`), else
    None."""
    allowed = (ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator,
               ast.unaryop)
    if not all(isinstance(n, allowed) for n in ast.walk(node)):
        return None
    try:
        value = eval(compile(ast.Expression(node), "<size>", "eval"),
                     {"__builtins__": {}})
    except Exception:
        return None
    return value if type(value) is int else None


class _ScaleSizes(ast.NodeTransformer):
    """Module-level `NAME = <integer expression of literals>` with value >=
    32 becomes max(16, value // scale); nothing inside functions or
    classes."""

    def __init__(self, scale):
        self.scale = scale

    def visit_Module(self, node):
        for statement in node.body:
            if isinstance(statement, (ast.Assign, ast.AnnAssign)):
                value = (_constant_int(statement.value)
                         if statement.value is not None else None)
                if value is not None and value >= 32:
                    statement.value = ast.Constant(
                        max(16, value // self.scale))
        return node


def cast_inputs(torch, inputs, dtype):
    """KernelBench's precision option: floating-point tensors cast to
    `dtype`; integer tensors and Python values unchanged."""
    if dtype is None:
        return list(inputs)
    return [x.to(dtype) if isinstance(x, torch.Tensor) and
            x.is_floating_point() else x for x in inputs]


def build_model(torch, namespace, device, dtype=None):
    """Model(*get_init_inputs()) under MODEL_SEED, on `device` ("meta": no
    memory), cast to `dtype` (None: as built). Training mode, as
    KernelBench builds and calls it (it never calls eval())."""
    torch.manual_seed(MODEL_SEED)
    init_inputs = namespace["get_init_inputs"]()
    with torch.device(device):
        model = namespace["Model"](*init_inputs)
    if dtype is not None:
        model = model.to(dtype)
    return model


def make_inputs(torch, namespace, seed, device, dtype=None):
    """get_inputs() under `seed`, created on `device` (torch's factory
    functions follow the default device, so multi-gigabyte inputs are made
    on the GPU, or nowhere on "meta")."""
    torch.manual_seed(seed)
    with torch.device(device):
        inputs = namespace["get_inputs"]()
    return cast_inputs(torch, inputs, dtype)


def tensor_inputs(torch, inputs):
    """The inputs a compiled model takes: torch.export bakes Python values
    (a dim, a scale) into the graph as constants."""
    return [x for x in inputs if isinstance(x, torch.Tensor)]


def find_problems(paths):
    """Problem files under `paths` (files or folders), sorted by level and
    number."""
    found = []
    for path in paths:
        if os.path.isdir(path):
            for root, _, files in os.walk(path):
                found += [os.path.join(root, f) for f in files
                          if f.endswith(".py") and f[0].isdigit()]
        elif os.path.isfile(path):
            found.append(path)
        else:
            raise FileNotFoundError(path)

    def order(p):
        level = os.path.basename(os.path.dirname(os.path.abspath(p)))
        number = int(re.match(r"(\d+)", os.path.basename(p)).group(1))
        return level, number
    return [Problem(p) for p in sorted(set(found), key=order)]

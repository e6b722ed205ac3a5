"""`python -m ke import FILE.py:NAME --input SHAPE[:DTYPE]... [--weights
inline|arguments] [--training] [-o OUT.mlir]`

Imports a PyTorch module from the command line with ke.import_torch:
NAME in FILE.py (or an importable module, `package.module:NAME`) is an
nn.Module instance, an nn.Module class, or a function returning either,
called without arguments; each --input is an example input's shape
("4x16", "1x3x224x224") with an optional dtype ("4x16:bf16"; f32 by
default). Random example inputs decide only shapes and dtypes.
--weights and --training are ke.import_torch's options. The
linalg-on-tensors MLIR goes to OUT (default: stdout), ready for `ke-opt
tune` and `ke-opt compile`. Exits 1 with the importer's message on error.
"""

import argparse
import importlib
import importlib.util
import os
import sys


def _load(spec):
    """The object NAME of `FILE.py:NAME` or `module:NAME`."""
    if ":" not in spec:
        raise SystemExit("ke import: give FILE.py:NAME or module:NAME, got %r" % spec)
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py"):
        if not os.path.isfile(where):
            raise SystemExit("ke import: %s: no such file" % where)
        loader = importlib.util.spec_from_file_location("ke_import_model", where)
        module = importlib.util.module_from_spec(loader)
        sys.path.insert(0, os.path.dirname(os.path.abspath(where)))
        loader.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    if not hasattr(module, name):
        raise SystemExit("ke import: %s has no %r" % (where, name))
    return getattr(module, name)


def _input(text, torch):
    dtypes = {"f32": torch.float32, "f16": torch.float16,
              "bf16": torch.bfloat16, "f64": torch.float64,
              "i64": torch.int64, "i32": torch.int32}
    shape_text, _, dtype = text.partition(":")
    try:
        shape = [int(d) for d in shape_text.split("x")] if shape_text else []
    except ValueError:
        raise SystemExit("ke import: bad shape %r (write 4x16)" % shape_text)
    dtype = dtype or "f32"
    if dtype not in dtypes:
        raise SystemExit("ke import: unknown dtype %r (one of %s)" %
                         (dtype, ", ".join(dtypes)))
    if dtypes[dtype].is_floating_point:
        return torch.randn(shape).to(dtypes[dtype])
    return torch.randint(0, 8, shape, dtype=dtypes[dtype])


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ke")
    sub = parser.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("import", help="a PyTorch module to linalg MLIR")
    imp.add_argument("model", help="FILE.py:NAME or module:NAME")
    imp.add_argument("--input", action="append", default=[], required=True,
                     help="an example input's shape[:dtype], e.g. 4x16:f32")
    imp.add_argument("--weights", choices=("inline", "arguments"),
                     default="inline",
                     help="weights as constants (default) or as arguments "
                     "after the inputs (ke.model_weights order)")
    imp.add_argument("--training", action="store_true",
                     help="import one training-mode forward (batch norm "
                     "with batch statistics) instead of eval mode")
    imp.add_argument("--roundings", choices=("cpu", "gpu"), default="cpu",
                     help="round a 16-bit model where eager PyTorch does on "
                     "CPUs (default) or on GPUs (a convolution's bias "
                     "added after its rounded result)")
    imp.add_argument("-o", "--output", default="-")
    args = parser.parse_args(argv)

    import torch
    from torch import nn
    import ke
    model = _load(args.model)
    if not isinstance(model, nn.Module):
        model = model()
    if not isinstance(model, nn.Module):
        raise SystemExit("ke import: %s is not an nn.Module (nor makes one)" %
                         args.model)
    inputs = tuple(_input(text, torch) for text in args.input)
    try:
        text = ke.import_torch(model, inputs, weights=args.weights,
                               training=args.training,
                               roundings=args.roundings)
    except ke.KeError as error:
        print("ke import: error: %s" % error, file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

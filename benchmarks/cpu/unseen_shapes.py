#!/usr/bin/env python3
"""Issue #16, "shapes you have not seen": one problem of every kind of the
suite at shapes drawn at random, then the CPU no-cliffs check on them.

For --seed S, writes one small problem per kind (NN and nn.Linear matmuls,
batch matmul, matrix-vector, NCHW / NHWC / strided / dilated / depthwise /
3-D convolutions, max and average pooling, row sums, means and maxima,
argmax, softmax in f32 and f16, log-softmax, layer and RMS norm, tanh GELU
and sigmoid chains) with extents drawn from odd-friendly ranges (no
power-of-two rounding; rows shorter than a vector and longer than a page),
sized so that the unscheduled reference runs in milliseconds on this CPU.
A new seed gives shapes no one tuned or looked at before the run.

Then runs benchmarks/cpu/no_cliffs.py on them (unless --write-only): each
file tuned with no database, and a workload whose best is slower than its
unscheduled reference by more than the noise is a cliff (exit 1).

    python3 benchmarks/cpu/unseen_shapes.py --seed 2026 --out build/unseen-2026
"""
import argparse
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "suite"))
import generate as suite  # noqa: E402


def problems(rng):
    """name -> MLIR text, one problem per kind."""
    r = rng.randint
    P = {}
    m, n, k = r(5, 150), r(5, 150), r(5, 150)
    P["matmul"] = suite.matmul("matmul", m, n, k)
    m, n, k = r(5, 150), r(5, 150), r(5, 150)
    P["matmul_linear"] = suite.matmul("matmul_linear", m, n, k, tb=True)
    m, n, k = r(5, 100), r(5, 100), r(5, 100)
    P["matmul_bf16"] = suite.matmul("matmul_bf16", m, n, k, dtype="bf16")
    P["batch_matmul"] = suite.batch_matmul("batch_matmul", r(2, 12), r(3, 60), r(3, 60), r(3, 60))
    P["matvec"] = suite.matvec("matvec", r(20, 1500), r(20, 1500))

    def conv2d(name, op, layout, stride, dilation, depthwise=False):
        nb, c, f = r(1, 2), r(1, 24), r(1, 24)
        kh = rng.choice([1, 3, 5, 7])
        extent = dilation * (kh - 1) + 1
        hw = r(extent, extent + 16)
        out = (hw - extent) // stride + 1
        if depthwise:
            inp, flt, res = (nb, hw, hw, c), (kh, kh, c), (nb, out, out, c)
        elif layout == "nchw":
            inp, flt, res = (nb, c, hw, hw), (f, c, kh, kh), (nb, f, out, out)
        else:
            inp, flt, res = (nb, hw, hw, c), (kh, kh, c, f), (nb, out, out, f)
        P[name] = suite.conv(name, op, inp, flt, res, stride, dilation, 2)

    conv2d("conv2d_nchw", "conv_2d_nchw_fchw", "nchw", 1, 1)
    conv2d("conv2d_nchw_strided", "conv_2d_nchw_fchw", "nchw", rng.choice([2, 3]), 1)
    conv2d("conv2d_nhwc", "conv_2d_nhwc_hwcf", "nhwc", 1, 1)
    conv2d("conv2d_nhwc_dilated", "conv_2d_nhwc_hwcf", "nhwc", 1, 2)
    conv2d("conv2d_depthwise", "depthwise_conv_2d_nhwc_hwc", "nhwc", rng.choice([1, 2]), 1,
           depthwise=True)
    d, c, f = r(3, 8), r(1, 8), r(1, 8)
    P["conv3d"] = suite.conv("conv3d", "conv_3d_ndhwc_dhwcf", (1, d + 2, d + 2, d + 2, c),
                             (3, 3, 3, c, f), (1, d, d, d, f), 1, 1, 3)
    for kind in ("max", "avg"):
        window, stride = rng.choice([2, 3]), rng.choice([1, 2])
        c, hw = r(1, 24), r(window, window + 30)
        out = (hw - window) // stride + 1
        layout = rng.choice(["nhwc", "nchw"]) if kind == "max" else "nhwc"
        inp = (1, c, hw, hw) if layout == "nchw" else (1, hw, hw, c)
        res = (1, c, out, out) if layout == "nchw" else (1, out, out, c)
        P[f"{kind}pool"] = suite.pool(f"{kind}pool", kind, inp, window, res, stride, layout=layout)
    # Rows: shorter than a vector, odd, or long, and few or many of them.
    def rows():
        return r(1, 300), rng.choice([r(2, 15), r(16, 1000), r(1000, 20000)])

    for kind in ("sum", "mean", "max"):
        P[f"reduce_{kind}"] = suite.reduce(f"reduce_{kind}", kind, *rows())
    P["argmax"] = suite.argmax("argmax", *rows())
    P["softmax"] = suite.softmax("softmax", *rows())
    P["softmax_f16"] = suite.softmax("softmax_f16", *rows(), dtype="f16")
    P["log_softmax"] = suite.log_softmax("log_softmax", *rows())
    P["layernorm"] = suite.layernorm("layernorm", *rows())
    P["rmsnorm"] = suite.layernorm("rmsnorm", *rows(), rms=True)
    for act in ("gelu", "sigmoid"):
        P[f"{act}_chain"] = suite.activation_chain(f"{act}_chain", act, (r(1, 200), r(1, 500)))
    return P


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", required=True, help="folder for the generated problems")
    parser.add_argument("--write-only", action="store_true",
                        help="write the problems, do not run the check")
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--explore", type=int, default=16)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    files = []
    for name, text in sorted(problems(random.Random(args.seed)).items()):
        path = os.path.join(args.out, name + ".mlir")
        with open(path, "w") as f:
            f.write(f"// ke unseen shapes, seed {args.seed}: {name}. "
                    f"Generated by benchmarks/cpu/unseen_shapes.py.\n")
            f.write(text)
        files.append(path)
    print(f"[unseen] {len(files)} problems in {args.out}", file=sys.stderr)
    if args.write_only:
        return 0
    return subprocess.call([sys.executable, os.path.join(HERE, "no_cliffs.py"),
                            "--trials", str(args.trials), "--explore", str(args.explore)]
                           + files)


if __name__ == "__main__":
    sys.exit(main())

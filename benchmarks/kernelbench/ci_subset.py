#!/usr/bin/env python3
"""The CPU correctness subset of KernelBench (ctest `kernelbench-cpu`).

Prepares and checks SUBSET (no timing) on this CPU at sizes / SCALE, then
compares every outcome with the expected one: a problem that stops being
correct, or starts passing where an outcome was expected to be something
else, fails the test with the difference. The problems are KernelBench's
files in KE_KERNELBENCH (default: ../shared/kernelbench beside the
checkout, or /work/shared/kernelbench).

Usage: ci_subset.py [--kernelbench DIR] [--work DIR]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCALE = 16

# One or two problems of each op kind, and the outcomes they must have.
SUBSET = {
    "level1/1_Square_matrix_multiplication_": "correct",
    "level1/4_Matrix_vector_multiplication_": "correct",
    "level1/19_ReLU": "correct",
    "level1/23_Softmax": "correct",
    "level1/26_GELU_": "correct",
    "level1/36_RMSNorm_": "correct",
    "level1/40_LayerNorm": "correct",
    "level1/42_Max_Pooling_2D": "correct",
    "level1/47_Sum_reduction_over_a_dimension": "correct",
    "level1/50_conv_standard_2D__square_input__square_kernel": "correct",
    "level1/64_conv_transposed_1D": "correct",
    "level1/33_BatchNorm": "correct",
    "level1/34_InstanceNorm": "correct",
    "level1/35_GroupNorm_": "correct",
    "level1/89_cumsum": "unsupported-op",
    "level1/95_CrossEntropyLoss": "correct",
    "level1/99_TripletMarginLoss": "correct",
    "level2/1_Conv2D_ReLU_BiasAdd": "correct",
    "level2/5_ConvTranspose2d_Subtract_Tanh": "correct",
    "level2/7_Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd": "correct",
    "level1/67_conv_standard_1D": "correct",
    "level2/33_Gemm_Scale_BatchNorm": "correct",
    "level2/41_Gemm_BatchNorm_GELU_ReLU": "correct",
    "level2/99_Matmul_GELU_Softmax": "correct",
}


def find_kernelbench(explicit):
    candidates = [explicit, os.environ.get("KE_KERNELBENCH"),
                  os.path.join(ROOT, "..", "shared", "kernelbench"),
                  "/work/shared/kernelbench"]
    for candidate in candidates:
        if candidate and os.path.isdir(os.path.join(candidate, "level1")):
            return os.path.abspath(candidate)
    sys.exit("kernelbench-cpu: no KernelBench problems found; set "
             "KE_KERNELBENCH to the folder with level1/ and level2/")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernelbench")
    parser.add_argument("--work")
    args = parser.parse_args()
    kernelbench = find_kernelbench(args.kernelbench)
    work = args.work or tempfile.mkdtemp(prefix="ke-kernelbench-")
    files = []
    for name in SUBSET:
        path = os.path.join(kernelbench, name + ".py")
        if not os.path.isfile(path):
            sys.exit("kernelbench-cpu: %s is missing" % path)
        files.append(path)
    harness = [sys.executable, os.path.join(HERE, "harness.py")]
    subprocess.run(harness + ["prepare", *files, "--out", work, "--target",
                              "cpu", "--scale", str(SCALE), "--timeout",
                              "300"], check=True)
    subprocess.run(harness + ["run", work, "--problems", *files,
                              "--no-timing", "--timeout", "300"], check=True)
    results = {}
    with open(os.path.join(work, "results.jsonl")) as f:
        for line in f:
            record = json.loads(line)
            results[record["name"]] = record
    failures = []
    for name, expected in SUBSET.items():
        got = results.get(name, {}).get("outcome", "missing")
        if got != expected:
            failures.append("%s: expected %s, got %s %s" % (
                name, expected, got, results.get(name, {}).get("detail", "")))
    correct = sum(r["outcome"] == "correct" for r in results.values())
    print("kernelbench-cpu: %d/%d correct at sizes / %d (%s)" % (
        correct, len(SUBSET), SCALE, work))
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Do records applied by `ke-opt compile` reproduce the recorded time?

Tunes a kernel (fill + matmul, memref arguments so that a C program can call
it) into a fresh database, compiles it with that database into an object
(`ke-opt compile --db`, which applies the best record through
--ke-apply-tuned-schedules), links the object into a C timing harness (the
measurement protocol: warm-up, repeats until 0.5 s, median; inputs as in
ke's evaluator are random and non-zero) and compares, ROUNDS times in
alternation, the compiled object's median with the database's recorded
median and with `ke-opt bench --db` re-measuring the same record in this run.

    python3 benchmarks/cpu/apply_check.py --size 1024 --trials 200 --rounds 3
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("KE_BUILD_DIR", os.path.join(ROOT, "build"))
KE_OPT = os.environ.get("KE_OPT", os.path.join(BUILD, "tools", "ke-opt", "ke-opt"))
WORK = os.path.join(BUILD, "apply-check")
LLVM_LIB = "/usr/lib/llvm-22/lib"

KERNEL = """func.func @kernel(%A: memref<{n}x{n}xf32>, %B: memref<{n}x{n}xf32>, %C: memref<{n}x{n}xf32>) {{
  %a = bufferization.to_tensor %A restrict : memref<{n}x{n}xf32> to tensor<{n}x{n}xf32>
  %b = bufferization.to_tensor %B restrict : memref<{n}x{n}xf32> to tensor<{n}x{n}xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{n}x{n}xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  %m = linalg.matmul ins(%a, %b : tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) outs(%c : tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  bufferization.materialize_in_destination %m in restrict writable %C : (tensor<{n}x{n}xf32>, memref<{n}x{n}xf32>) -> ()
  return
}}
"""

HARNESS = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef struct { float *allocated, *aligned; int64_t offset, sizes[2], strides[2]; } Memref2D;
void _mlir_ciface_kernel(Memref2D *a, Memref2D *b, Memref2D *c);
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static int cmp(const void *x, const void *y) { double a = *(const double *)x, b = *(const double *)y; return (a > b) - (a < b); }
int main(void) {
  const int64_t n = N;
  float *a = aligned_alloc(64, n * n * 4), *b = aligned_alloc(64, n * n * 4), *c = aligned_alloc(64, n * n * 4);
  srand(1);
  for (int64_t i = 0; i < n * n; ++i) {
    a[i] = (rand() % 1000 + 1) / 1000.0f * ((rand() & 1) ? 1 : -1);
    b[i] = (rand() % 1000 + 1) / 1000.0f * ((rand() & 1) ? 1 : -1);
  }
  Memref2D A = {a, a, 0, {n, n}, {n, 1}}, B = {b, b, 0, {n, n}, {n, 1}}, C = {c, c, 0, {n, n}, {n, 1}};
  _mlir_ciface_kernel(&A, &B, &C); /* warm-up */
  double times[1000], total = 0; int runs = 0;
  while (runs < 3 || (total < 0.5 && runs < 1000)) {
    double t0 = now(); _mlir_ciface_kernel(&A, &B, &C); double t = now() - t0;
    times[runs++] = t; total += t;
  }
  qsort(times, runs, sizeof(double), cmp);
  /* spot check one element against a float64 dot product */
  double ref = 0; for (int64_t k = 0; k < n; ++k) ref += (double)a[5 * n + k] * b[k * n + 7];
  double err = (c[5 * n + 7] - ref) / (ref != 0 ? ref : 1);
  printf("{\"seconds\": %.9g, \"runs\": %d, \"spot_relative_error\": %.3g}\n", times[runs / 2], runs, err < 0 ? -err : err);
  return 0;
}
"""


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[-3000:]}")
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--trials", type=int, default=200)
    p.add_argument("--explore", type=int, default=150)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    os.makedirs(WORK, exist_ok=True)
    kernel, db = os.path.join(WORK, "kernel.mlir"), os.path.join(WORK, "tuning.db")
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    with open(kernel, "w") as f:
        f.write(KERNEL.format(n=args.size))
    with open(os.path.join(WORK, "harness.c"), "w") as f:
        f.write(HARNESS)
    print(f"[apply-check] tuning {args.size}^3 ({args.trials} trials)...", file=sys.stderr)
    summary = json.loads(run([KE_OPT, "tune", kernel, "--db", db, "--trials", str(args.trials),
                              "--explore", str(args.explore), "--seed", str(args.seed),
                              "--no-progress"]).stdout)
    matmul = next(w for w in summary["workloads"] if w["op"] == "linalg.matmul")
    obj, exe = os.path.join(WORK, "tuned.o"), os.path.join(WORK, "tuned")
    remark = run([KE_OPT, "compile", kernel, "--db", db, "-o", obj]).stderr
    print(remark.strip(), file=sys.stderr)
    run(["clang-22", "-O2", f"-DN={args.size}", os.path.join(WORK, "harness.c"), obj, "-o", exe,
         f"-L{LLVM_LIB}", f"-Wl,-rpath,{LLVM_LIB}", "-lomp", "-lm"])
    compiled, bench = [], []
    env = dict(os.environ, OMP_PROC_BIND="close", OMP_PLACES="cores")
    for _ in range(args.rounds):
        out = json.loads(run([exe], env=env).stdout)
        if out["spot_relative_error"] > 1e-4:
            sys.exit(f"the compiled kernel is wrong: {out}")
        compiled.append(out["seconds"])
        b = json.loads(run([KE_OPT, "bench", kernel, "--db", db, "--min-seconds", "0.5"]).stdout)
        row = next(w for w in b["workloads"] if w["op"] == "linalg.matmul")
        bench.append(row["tuned"]["seconds"])
    recorded = matmul["best_seconds"]
    c, r = statistics.median(compiled), statistics.median(bench)
    print(f"| matmul {args.size}^3 (fill fused) | {recorded * 1e3:.3f} ms | {r * 1e3:.3f} ms "
          f"| {c * 1e3:.3f} ms | {c / recorded:.2f} | {c / r:.2f} |")


if __name__ == "__main__":
    main()

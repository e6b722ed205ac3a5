#!/usr/bin/env python3
"""Issue #17, item 5: how many trials the cost model's warm start saves on a
model zoo, on this CPU.

The zoo is models of benchmarks/realistic/small (each a few layers of a real
model). For each model M of --targets, leave-one-out: the other models are
tuned first into a database of their own (--prior-trials per workload,
stored with their features), then M is tuned twice from copies of that
database with the same seed and budget: cold (`--transfer-samples 0`, the
model starts empty) and warm (the default, the model starts from the other
models' trials). Every trial of M is in the run's records, so each
workload's running best is known trial by trial.

Reported per workload: the trials each run needed to come within 5% of the
better of the two final bests (the budget, marked ">", when it never did),
their difference (trials saved), and the ratio of the warm run's best to the
cold run's after 8, 16 and 32 trials. Times are each run's own
measurements, so differences of a few percent are noise; --seeds repeats
both runs.

    python3 benchmarks/search/transfer.py --targets vit --seeds 1,2
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("KE_BUILD_DIR", os.path.join(ROOT, "build"))
KE_OPT = os.environ.get("KE_OPT", os.path.join(BUILD, "tools", "ke-opt", "ke-opt"))
SMALL = os.path.join(ROOT, "benchmarks", "realistic", "small")
ZOO = {
    "bert": ["bert_qkv", "bert_attn_scores", "bert_layernorm", "bert_softmax"],
    "resnet": ["resnet_stem", "resnet_conv1x1", "resnet_conv3x3", "resnet_maxpool"],
    "vit": ["vit_patch_embed", "vit_mlp_up", "vit_gelu", "vit_softmax"],
    "gpt2": ["gpt2_lm_head", "gpt2_log_softmax", "gpt2_argmax"],
}


def tune(files, db, args, extra, records=None):
    cmd = [KE_OPT, "tune", *files, "--target", "cpu", "--db", db, "--no-progress",
           "--min-seconds", str(args.min_seconds), *extra]
    if records:
        cmd += ["--records", records]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout)


def curves(records):
    """workload -> running best after each of its trials."""
    best = {}
    with open(records) as f:
        for line in f:
            r = json.loads(line)
            if r["role"] != "trial":
                continue
            run = best.setdefault(r["workload"], [])
            last = run[-1] if run else float("inf")
            t = r["median_seconds"] if r["error"] == "none" else float("inf")
            run.append(min(last, t))
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="vit")
    parser.add_argument("--prior-trials", type=int, default=48)
    parser.add_argument("--trials", type=int, default=48)
    parser.add_argument("--explore", type=int, default=40)
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--min-seconds", type=float, default=0.02)
    parser.add_argument("--workdir", default=os.path.join(BUILD, "search-transfer"))
    parser.add_argument("--out")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    rows, results = [], {}
    for target in args.targets.split(","):
        files = [os.path.join(SMALL, p + ".mlir") for p in ZOO[target]]
        others = [os.path.join(SMALL, p + ".mlir")
                  for m, ps in ZOO.items() if m != target for p in ps]
        prior = os.path.join(args.workdir, f"prior-{target}.db")
        for path in (prior, prior + "-wal", prior + "-shm"):
            if os.path.exists(path):
                os.remove(path)
        print(f"[transfer] {target}: tuning {len(others)} workloads of the other models",
              file=sys.stderr, flush=True)
        tune(others, prior, args, ["--trials", str(args.prior_trials),
                                   "--explore", str(args.prior_trials), "--seed", "7"])
        for seed in args.seeds.split(","):
            runs = {}
            for mode, extra in (("cold", ["--transfer-samples", "0"]), ("warm", [])):
                db = os.path.join(args.workdir, f"{target}-{mode}-{seed}.db")
                records = db.replace(".db", ".jsonl")
                for path in (db, db + "-wal", db + "-shm", records):
                    if os.path.exists(path):
                        os.remove(path)
                shutil.copy(prior, db)
                print(f"[transfer] {target} seed {seed}: {mode}", file=sys.stderr, flush=True)
                summary = tune(files, db, args, ["--trials", str(args.trials), "--explore",
                                                 str(args.explore), "--seed", seed, *extra],
                               records)
                runs[mode] = {"curves": curves(records),
                              "transfer": {w["key"]: w.get("transfer_samples")
                                           for w in summary["workloads"] if "trials" in w},
                              "ops": {w["key"]: w["op"] for w in summary["workloads"]}}
            for key, cold in runs["cold"]["curves"].items():
                warm = runs["warm"]["curves"].get(key)
                if not warm or cold[-1] == float("inf"):
                    continue
                goal = 1.05 * min(cold[-1], warm[-1])

                def reach(curve):
                    for i, b in enumerate(curve):
                        if b <= goal:
                            return i + 1, False
                    return len(curve), True

                (tc, cc), (tw, cw) = reach(cold), reach(warm)
                at = {k: warm[min(k, len(warm)) - 1] / cold[min(k, len(cold)) - 1]
                      for k in (8, 16, 32)}
                rows.append((target, seed, runs["cold"]["ops"][key], key[:8],
                             runs["warm"]["transfer"].get(key), tc, cc, tw, cw, at))
                results.setdefault(target, []).append(
                    {"seed": seed, "workload": key, "op": runs["cold"]["ops"][key],
                     "transfer_samples": runs["warm"]["transfer"].get(key),
                     "cold_trials": tc, "cold_censored": cc, "warm_trials": tw,
                     "warm_censored": cw, "warm_over_cold_at": at})
    print("| model | seed | workload | prior samples | cold: trials to 5% | warm | saved "
          "| warm/cold best @8 | @16 | @32 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for target, seed, op, key, n, tc, cc, tw, cw, at in rows:
        mark = lambda t, c: f">{t}" if c else str(t)  # noqa: E731
        print(f"| {target} | {seed} | {op} {key} | {n} | {mark(tc, cc)} | {mark(tw, cw)} | "
              f"{tc - tw:+d} | {at[8]:.2f} | {at[16]:.2f} | {at[32]:.2f} |")
    saved = [tc - tw for *_, tc, cc, tw, cw, at in rows]
    if saved:
        print(f"\ntrials saved: mean {statistics.mean(saved):+.1f}, median "
              f"{statistics.median(saved):+.1f} over {len(saved)} workload runs; "
              f"warm/cold best @16 geomean "
              f"{statistics.geometric_mean([r[-1][16] for r in rows]):.3f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()

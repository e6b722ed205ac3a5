"""Metrics, table and plot of KernelBench runs (harness.py report).

KernelBench's definitions: a problem's speedup is baseline time / ke time;
fast_p is the fraction of ALL problems (failures included) that are
correct and have speedup > p; fast_0 is the fraction correct. The
geometric mean speedup is over the correct problems that were timed.
Every metric is given per level, against eager PyTorch and against
torch.compile (default mode; max-autotune too when the run timed it).
"""

import json
import math
import os
from collections import Counter, defaultdict

THRESHOLDS = (0, 1, 1.5, 2)
OUTCOMES = ("correct", "wrong-result", "runtime-error", "compile-error",
            "import-failed", "unsupported-op", "timeout")


def read_results(directory):
    """name -> result (the last line for a name wins: a rerun replaces)."""
    results = {}
    with open(os.path.join(directory, "results.jsonl")) as f:
        for line in f:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line torn by a killed run
            results[record["name"]] = record
    return results


def speedup(result, baseline):
    times = result.get("times") or {}
    if result["outcome"] != "correct" or baseline not in times:
        return None
    return times[baseline] / times["ke"]


def baselines(results):
    found = {"eager"}
    for r in results:
        found |= set((r.get("times") or {}).keys())
    found.discard("ke")
    return sorted(found, key=lambda b: (b != "eager", b))


def metrics(results):
    """The metrics of a list of results (one level, or all)."""
    total = len(results)
    out = {"total": total,
           "outcomes": dict(Counter(r["outcome"] for r in results)),
           "correct": sum(r["outcome"] == "correct" for r in results)}
    for baseline in baselines(results):
        values = [speedup(r, baseline) for r in results]
        timed = [v for v in values if v is not None]
        entry = {"timed": len(timed)}
        any_timed = any(r.get("times") for r in results)
        for p in THRESHOLDS:
            if p > 0 and not any_timed:
                entry["fast_%g" % p] = None  # an untimed run: no speedups
                continue
            entry["fast_%g" % p] = (
                sum(1 for r, v in zip(results, values)
                    if r["outcome"] == "correct" and (p == 0 or (
                        v is not None and v > p))) / total if total else 0.0)
        entry["geomean"] = (math.exp(sum(math.log(v) for v in timed) /
                                     len(timed)) if timed else None)
        out[baseline] = entry
    return out


def _level(name):
    return name.split("/")[0]


def _fmt(value, percent=False):
    if value is None:
        return "—"
    return "%.0f%%" % (100 * value) if percent else "%.2f" % value


def markdown(title, results):
    lines = ["## %s" % title, ""]
    levels = sorted({_level(r["name"]) for r in results})
    groups = [(level, [r for r in results if _level(r["name"]) == level])
              for level in levels]
    if len(groups) > 1:
        groups.append(("all", results))
    names = baselines(results)
    header = "| set | correct | " + " | ".join(
        "fast_%g vs %s" % (p, b) for b in names for p in THRESHOLDS[1:]) + \
        " | " + " | ".join("geomean vs %s" % b for b in names) + " |"
    lines += [header, "|" + "---|" * (header.count("|") - 1)]
    for label, group in groups:
        m = metrics(group)
        row = ["%s" % label, "%d/%d (%s)" % (m["correct"], m["total"],
                                             _fmt(m["eager"]["fast_0"], True))]
        row += [_fmt(m[b]["fast_%g" % p], True) if b in m else "—"
                for b in names for p in THRESHOLDS[1:]]
        row += [_fmt(m[b]["geomean"]) if b in m else "—" for b in names]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Outcomes: " + ", ".join(
        "%s %d" % (o, c) for o, c in sorted(
            Counter(r["outcome"] for r in results).items(),
            key=lambda item: OUTCOMES.index(item[0])
            if item[0] in OUTCOMES else 99)), ""]

    lines += ["| op kind | problems | correct | fast_1 vs eager | geomean vs eager |",
              "|---|---|---|---|---|"]
    kinds = defaultdict(list)
    for r in results:
        kinds[r.get("kind") or "?"].append(r)
    for kind in sorted(kinds):
        m = metrics(kinds[kind])
        lines.append("| %s | %d | %d | %s | %s |" % (
            kind, m["total"], m["correct"], _fmt(m["eager"]["fast_1"], True),
            _fmt(m["eager"]["geomean"])))
    lines += ["", "| problem | outcome | ke µs | eager µs | " +
              " | ".join("vs %s" % b for b in names) + " | notes |",
              "|---|---|---|---|" + "---|" * len(names) + "---|"]
    for r in sorted(results, key=lambda r: (_level(r["name"]), int(
            r["name"].split("/")[1].split("_")[0]))):
        times = r.get("times") or {}
        notes = []
        if r.get("op"):
            notes.append(r["op"])
        if r["outcome"] != "correct" and r.get("detail"):
            notes.append(r["detail"].replace("|", "/")[:140])
        notes += r.get("flags", [])
        if r.get("baseline_errors"):
            notes.append("torch.compile failed")
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            r["name"], r["outcome"],
            "%.1f" % (times["ke"] * 1e6) if "ke" in times else "",
            "%.1f" % (times["eager"] * 1e6) if "eager" in times else "",
            " | ".join(_fmt(speedup(r, b)) if speedup(r, b) else ""
                       for b in names), "; ".join(notes)))
    return lines


def plot(results, path, title):
    """Speedup of each correct, timed problem, sorted, one line per
    baseline, on a log scale."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(figsize=(8, 4.5))
    for baseline in baselines(results):
        values = sorted(v for v in (speedup(r, baseline) for r in results)
                        if v is not None)
        if values:
            axes.plot(range(len(values)), values, marker=".",
                      label="vs %s" % baseline)
    axes.axhline(1.0, color="grey", linewidth=0.8)
    axes.set_yscale("log")
    axes.set_xlabel("problems (correct and timed), sorted")
    axes.set_ylabel("speedup of ke")
    axes.set_title(title)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main(args):
    out = args.out or args.dirs[0]
    os.makedirs(out, exist_ok=True)
    lines, summary = [], {}
    for directory in args.dirs:
        results = list(read_results(directory).values())
        meta_path = os.path.join(directory, "prepare.json")
        meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
        title = "%s, %s%s" % (meta.get("target", "?"), meta.get("dtype", "?"),
                              ", sizes / %d" % meta["scale"]
                              if meta.get("scale", 1) > 1 else "")
        lines += markdown(title, results) + [""]
        summary[directory] = {"meta": meta, "all": metrics(results)}
        stem = os.path.basename(os.path.normpath(directory))
        if any(r.get("times") for r in results):
            plot(results, os.path.join(out, stem + "-speedups.png"), title)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("\n".join(lines[:12]))

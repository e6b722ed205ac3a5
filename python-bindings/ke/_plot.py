"""The convergence curve of a tuning run (`ke-opt tune --log run.csv`,
docs/tuning.md): best time against trials, one line per workload."""

import csv

from ke._errors import KeError


def read_convergence(log_csv):
    """{workload: [(trial, best_seconds)]} from a tuning log."""
    curves = {}
    with open(log_csv, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("best_seconds"):
                label = "%s %s" % (row["op"], row["workload"][:8])
                curves.setdefault(label, []).append(
                    (int(row["trial"]), float(row["best_seconds"])))
    return curves


def plot_convergence(log_csv, output=None, ax=None):
    """Plots best time (log scale) against trials for each workload of the
    log. Returns the matplotlib Axes; writes `output` (e.g. run.png) when
    given. Needs matplotlib (pip install matplotlib)."""
    try:
        import matplotlib
        if output is not None and ax is None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise KeError("ke.plot_convergence needs matplotlib: pip install "
                      "matplotlib") from error
    curves = read_convergence(log_csv)
    if not curves:
        raise KeError("'%s' has no measured candidates" % log_csv)
    if ax is None:
        _, ax = plt.subplots()
    for label, points in sorted(curves.items()):
        trials, seconds = zip(*points)
        ax.step(trials, seconds, where="post", label=label)
    ax.set_xlabel("trial")
    ax.set_ylabel("best time (s)")
    ax.set_yscale("log")
    ax.legend(fontsize="small")
    if output is not None:
        ax.figure.savefig(output)
    return ax

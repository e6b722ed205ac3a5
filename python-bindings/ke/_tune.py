"""ke.tune: runs the `ke-opt tune` driver on a model.

Tuning measures candidates in child processes and writes every record to
the database as it goes (a killed run resumes), which the driver already
does well; the package runs it rather than re-implementing it. Its live
progress line (stderr) is shown, and its JSON summary (stdout) returned.
"""

import json
import os
import subprocess
import sys
import tempfile

from ke._errors import KeError
from ke._library import find_ke_opt


def tune(model_or_mlir, example_inputs=None, target="cpu", trials=64,
         db="ke-tuning.db", explore=None, log=None, seed=None, progress=True,
         extra_args=()):
    """Tunes every workload of a model (an nn.Module with example_inputs,
    MLIR text or a .mlir path) on `target` with `trials` candidates per
    workload on average, recording them in `db` (created if missing).
    `log` writes the convergence CSV (ke.plot_convergence plots it).
    `progress`: True shows ke-opt's progress on stderr, False hides it, a
    callable gets each line. Returns the JSON summary: one dict per
    workload (best and untuned times, speedup, trials, errors)."""
    from ke._compiled import _mlir_text
    text, name = _mlir_text(model_or_mlir, example_inputs, target)
    with tempfile.TemporaryDirectory(prefix="ke-tune-") as work:
        path = os.path.join(work, name)
        with open(path, "w") as f:
            f.write(text)
        command = [str(find_ke_opt()), "tune", path, "--target", target,
                   "--trials", str(trials), "--db", os.fspath(db)]
        if explore is not None:
            command += ["--explore", str(explore)]
        if log is not None:
            command += ["--log", os.fspath(log)]
        if seed is not None:
            command += ["--seed", str(seed)]
        command += list(extra_args)
        # In the caller's directory: relative db and log paths mean there.
        process = subprocess.Popen(command, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        tail = []
        for line in process.stderr:
            tail = (tail + [line])[-20:]
            if callable(progress):
                progress(line.rstrip("\n"))
            elif progress:
                sys.stderr.write(line)
                sys.stderr.flush()
        summary = process.stdout.read()
        if process.wait() != 0:
            raise KeError("ke-opt tune failed (exit %d):\n%s" %
                          (process.returncode, "".join(tail)))
    try:
        return _parse_summary(summary)
    except ValueError as error:
        raise KeError("ke-opt tune printed no JSON summary: %s" %
                      summary[:500]) from error


def _parse_summary(text):
    """The summary: one JSON document, or one JSON object per line."""
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]

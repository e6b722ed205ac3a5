"""ke.tune (the ke-opt tune driver), ke.Database on what it recorded,
ke.compile with that database, and ke.plot_convergence of its log."""

import pytest
import torch
from torch import nn

import ke
from conftest import relative_error


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    work = tmp_path_factory.mktemp("tune")
    model = nn.Sequential(nn.Linear(32, 32), nn.ReLU())
    inputs = (torch.randn(16, 32),)
    lines = []
    summary = ke.tune(model, inputs, trials=4, db=work / "ke.db",
                      log=work / "run.csv", seed=1, progress=lines.append)
    return model, inputs, work, summary, lines


def test_tune_returns_the_summary(tuned):
    _, _, work, summary, lines = tuned
    assert (work / "ke.db").is_file()
    text = str(summary)
    assert "linalg.matmul" in text and "best_seconds" in text
    assert lines  # progress went to the callback


def test_database_queries(tuned):
    _, _, work, _, _ = tuned
    with ke.Database(work / "ke.db") as db:
        workloads = db.workloads()
        assert any(w["op"] == "linalg.matmul" and w["valid"] > 0
                   for w in workloads)
        best = db.best(target="cpu")
        assert best and all(r["error"] == "none" for r in best)
        assert isinstance(best[0]["knobs"], dict)
        assert len(db.records()) >= len(best)


def test_database_best_follows_the_final_record(tuned, tmp_path):
    """As ke's own getBest: the newest final record overrules the trials
    before it, later trials compete with it, rechecks never count."""
    import shutil
    import sqlite3
    _, _, work, _, _ = tuned
    path = tmp_path / "copy.db"
    shutil.copy(work / "ke.db", path)
    db = sqlite3.connect(path)
    key, target_id = db.execute(
        "SELECT workload, target_id FROM records WHERE role = 'trial' AND "
        "error = 'none' ORDER BY median LIMIT 1").fetchone()

    def add(role, median):
        row = db.execute(
            "SELECT * FROM records WHERE workload = ? AND role = 'trial' "
            "LIMIT 1", (key,)).fetchone()
        columns = [c[1] for c in db.execute("PRAGMA table_info(records)")]
        values = dict(zip(columns, row), id=None, role=role, median=median,
                      sketch=role + str(median))
        db.execute("INSERT INTO records (%s) VALUES (%s)" % (
            ", ".join(columns), ", ".join("?" * len(columns))),
            [values[c] for c in columns])
        db.commit()

    def best():
        with ke.Database(path) as kdb:
            rows = [r for r in kdb.best() if r["workload"] == key]
            listed = [w for w in kdb.workloads() if w["key"] == key]
        assert len(rows) == 1 and listed[0]["best_seconds"] == rows[0]["median"]
        return rows[0]["sketch"]

    add("recheck", 1e-12)  # a re-timing is never the best
    add("final", 10.0)
    assert best() == "final10.0"
    add("trial", 20.0)
    assert best() == "final10.0"
    add("trial", 5.0)
    assert best() == "trial5.0"
    add("final", 8.0)
    assert best() == "final8.0"
    db.close()


def test_compile_with_the_database(tuned):
    model, inputs, work, _, _ = tuned
    compiled = ke.compile(model, inputs, db=work / "ke.db")
    assert "applied tuned schedule" in compiled.remarks
    with torch.no_grad():
        assert relative_error(compiled(*inputs), model(*inputs)) <= 1e-4


def test_plot_convergence(tuned):
    _, _, work, _, _ = tuned
    ax = ke.plot_convergence(work / "run.csv", output=work / "run.png")
    assert ax.get_yscale() == "log"
    assert (work / "run.png").stat().st_size > 0


def test_relative_paths_mean_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = """
    func.func @forward(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
      %e = tensor.empty() : tensor<8x8xf32>
      %r = linalg.exp ins(%a : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
      return %r : tensor<8x8xf32>
    }"""
    ke.tune(text, trials=2, db="rel.db", log="rel.csv", progress=False)
    assert (tmp_path / "rel.db").is_file() and (tmp_path / "rel.csv").is_file()


def test_database_refuses_other_files(tmp_path):
    path = tmp_path / "other.db"
    path.write_text("not sqlite")
    with pytest.raises(ke.KeError):
        ke.Database(path)
    with pytest.raises(ke.KeError, match="no ke database"):
        ke.Database(tmp_path / "missing.db")

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

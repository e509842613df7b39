"""``ragbench batch``: notebooks × parameter sets, a failing notebook reported while the rest run, MLflow runs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragbench.cli import main
from ragbench.errors import ConfigError
from ragbench.tune.batch import load_batch

from .conftest import require, write_yaml

nbformat = require("nbformat", "notebooks")
MlflowClient = require("mlflow.tracking", "track").MlflowClient


def _notebook(path: Path, body: str) -> Path:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("x = 1")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.write_text(nbformat.writes(nb))
    return path


def test_batch_continues_past_a_failing_notebook(tmp_path, monkeypatch, capsys):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    bad = _notebook(tmp_path / "bad.ipynb", "raise ValueError(f'broken {x}')")
    good = _notebook(tmp_path / "good.ipynb", "print('twice', x * 2)")
    out = tmp_path / "runs"
    path = write_yaml(tmp_path / "batch.yaml", {"output_dir": str(out), "jobs": [
        {"notebook": str(bad), "parameters": {"x": 5}},
        {"notebook": str(good), "parameters": [{"x": 2}, {"x": 21}]},
    ]})
    assert main(["batch", str(path), "--json"]) == 1
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 1  # --json: one line on stdout, the report on stderr
    last = json.loads(captured.out)
    assert last["ok"] == 2 and last["failed"] == [str(out / "bad.ipynb")]
    assert "ValueError: broken 5" in captured.err and "1 notebook(s) failed" in captured.err
    for name, expected in (("good-0.ipynb", "twice 4"), ("good-1.ipynb", "twice 42")):
        nb = nbformat.read(out / name, as_version=4)
        assert expected in nb.cells[-1].outputs[0]["text"]
    assert (out / "bad.ipynb").exists()  # the failed notebook is kept up to its failing cell
    client = MlflowClient(uri)
    runs = client.search_runs([client.get_experiment_by_name("ragbench-batch").experiment_id])
    assert sorted((r.info.run_name, r.info.status) for r in runs) == [
        ("bad", "FAILED"), ("good-0", "FINISHED"), ("good-1", "FINISHED")]
    for r in runs:
        assert [a.path for a in client.list_artifacts(r.info.run_id)] == [r.info.run_name + ".ipynb"]
    assert {r.data.params.get("param.x") for r in runs} == {"5", "2", "21"}


@pytest.mark.parametrize("jobs, fragment", [
    ([], "non-empty list"),
    ([{"notebook": "missing.ipynb"}], "does not exist"),
    ([{"notebook": "NB", "parameters": [1, 2]}], "mapping or a list of mappings"),
    ([{"notebook": "NB"}, {"notebook": "NB"}], "two executions would write"),
])
def test_bad_batch_files(tmp_path, jobs, fragment):
    nb = _notebook(tmp_path / "nb.ipynb", "pass")
    jobs = [{k: (str(nb) if v == "NB" else v) for k, v in j.items()} for j in jobs]
    with pytest.raises(ConfigError) as e:
        load_batch(write_yaml(tmp_path / "b.yaml", {"jobs": jobs, "output_dir": str(tmp_path / "o")}))
    assert fragment in str(e.value)
    assert not (tmp_path / "o").exists()


def test_a_notebooks_own_runs_nest_under_its_batch_run(tmp_path, monkeypatch, capsys):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    nb = _notebook(tmp_path / "evaluate.ipynb", "from ragbench.tracking import record_run\n"
                   "rec = record_run('nb-evals', 'inner', None, {'score': x * 0.5, 'n': 4})\n"
                   "assert rec.run_id, rec")
    path = write_yaml(tmp_path / "batch.yaml", {"output_dir": str(tmp_path / "runs"), "jobs": [
        {"notebook": str(nb), "parameters": {"x": 3}}]})
    assert main(["batch", str(path), "--json", "--quiet"]) == 0
    run_id = json.loads(capsys.readouterr().out)["runs"][0]["mlflow_run_id"]
    client = MlflowClient(uri)
    outer = client.get_run(run_id)
    assert outer.data.metrics["inner.score"] == 1.5 and outer.data.metrics["inner.n"] == 4
    inner = client.search_runs([client.get_experiment_by_name("nb-evals").experiment_id])
    assert [r.data.tags["mlflow.parentRunId"] for r in inner] == [run_id]
    assert "RAGBENCH_PARENT_RUN_ID" not in __import__("os").environ

"""MLflow: one parent run per study, a nested run per trial, artifacts on the parent; a resumed study logs only its
new trials into the same parent; an unreachable tracking server loses nothing."""
from __future__ import annotations

import json


from ragbench.tune.run import run_study
from ragbench.tune.space import parse_spec
from ragbench.tune.storage import open_storage

from .conftest import require, _free_port, tiny_spec

optuna = require("optuna", "tune")
MlflowClient = require("mlflow.tracking", "track").MlflowClient


def test_nested_runs_written(tmp_path, tiny_beir, monkeypatch):
    uri = f"sqlite:///{tmp_path / 'ml' / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    (tmp_path / "ml").mkdir()
    spec = parse_spec(tiny_spec(tmp_path, tiny_beir, trials=3, sampler={"name": "random", "seed": 0}), tmp_path)
    res = run_study(spec, track=True, n_resamples=200)
    assert res.mlflow_run_id and res.tracking_error is None
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("ragbench-tune")
    runs = client.search_runs([exp.experiment_id])
    parent = [r for r in runs if r.info.run_id == res.mlflow_run_id][0]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == res.mlflow_run_id]
    assert len(runs) == 4 and len(children) == 3
    assert sorted(r.info.run_name for r in children) == ["trial-0", "trial-1", "trial-2"]
    child = children[0]
    assert child.data.params["bm25.stopwords"] in ("True", "False")
    assert child.data.params["retrieval.mode"] == "bm25"
    assert "nDCG_at_10" in child.data.metrics and "objective.nDCG_at_10" in child.data.metrics
    # Every trial logs all the objective's measures, not only the optimised one.
    assert {"R_at_10", "RR_at_10", "P_at_10", "AP", "context_tokens"} <= set(child.data.metrics)
    for tag in ("config_hash", "data_hash", "git_commit", "package_version"):
        assert child.data.tags[tag]
    assert parent.data.metrics["heldout_score"] == res.heldout_score
    assert parent.data.metrics["p_value"] == res.p_value
    arts = {a.path for a in client.list_artifacts(res.mlflow_run_id)}
    assert {"trials.csv", "history.png", "confirmation_per_query.csv", "tuned.yaml", "summary.json"} <= arts
    # Resume to 5 trials: same parent, only the two new trials are logged.
    res2 = run_study(spec, trials=5, track=True, n_resamples=200)
    assert res2.mlflow_run_id == res.mlflow_run_id
    children = [r for r in client.search_runs([exp.experiment_id])
                if r.data.tags.get("mlflow.parentRunId") == res.mlflow_run_id]
    assert sorted(r.info.run_name for r in children) == [f"trial-{i}" for i in range(5)]


def test_unreachable_tracking_server_loses_nothing(tmp_path, tiny_beir, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{_free_port()}")
    spec = parse_spec(tiny_spec(tmp_path, tiny_beir, trials=2), tmp_path)
    res = run_study(spec, track=True, n_resamples=200)
    assert res.mlflow_run_id is None
    assert "MLflow tracking failed" in res.tracking_error and "The study itself is safe" in res.tracking_error
    assert str(spec.study_dir) in res.tracking_error
    study = optuna.load_study(study_name="tiny", storage=open_storage(str(spec.study_dir / "study.journal")))
    assert len(study.trials) == 2
    summary = json.loads((spec.study_dir / "summary.json").read_text())
    assert summary["trials"] == 2 and summary["mlflow_run_id"] is None
    assert spec.tuned_path.is_file()


def test_a_cross_validation_run_holds_its_folds_studies(tmp_path, tiny_beir, monkeypatch):
    from ragbench.tune.crossval import run_crossval

    uri = f"sqlite:///{tmp_path / 'ml' / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    (tmp_path / "ml").mkdir()
    spec = parse_spec(tiny_spec(tmp_path, tiny_beir, trials=2, split={"folds": 2, "seed": 0},
                                sampler={"name": "grid", "seed": 0}), tmp_path)
    res = run_crossval(spec, track=True, n_resamples=200)
    assert res.mlflow_run_id and res.tracking_error is None
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("ragbench-tune")
    runs = {r.info.run_id: r for r in client.search_runs([exp.experiment_id])}
    cv = runs[res.mlflow_run_id]
    assert cv.data.tags["ragbench.kind"] == "crossval" and cv.info.run_name == "tiny.crossval"
    assert cv.data.metrics["heldout_score"] == 1.0 and cv.data.metrics["n"] == 10
    assert cv.data.metrics["fold.fold1.heldout_score"] == 1.0
    assert {a.path for a in client.list_artifacts(res.mlflow_run_id)} >= {"crossval.csv", "crossval_per_query.csv",
                                                                      "crossval.png"}
    studies = [r for r in runs.values() if r.data.tags.get("mlflow.parentRunId") == res.mlflow_run_id]
    assert sorted(r.info.run_name for r in studies) == ["tiny.fold1", "tiny.fold2"]
    # Each fold's study keeps its trials nested under it: 1 cross-validation + 2 studies + 2 × 2 trials.
    assert len(runs) == 7
    assert all(r.data.tags["ragbench.crossval"] == "tiny" for r in studies)
    # Run again: the folds are at their budget, and everything is logged into the same runs.
    again = run_crossval(spec, track=True, n_resamples=200)
    assert again.mlflow_run_id == res.mlflow_run_id
    assert len(client.search_runs([exp.experiment_id])) == 7
    # A cross-validation record naming a run the store does not have gets a new run instead of an error.
    record = spec.study_dir / "crossval.json"
    record.write_text(record.read_text().replace(res.mlflow_run_id, "0" * 32))
    third = run_crossval(spec, track=True, n_resamples=200)
    assert third.mlflow_run_id not in (None, res.mlflow_run_id) and third.tracking_error is None

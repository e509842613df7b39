"""MLflow tracking (local SQLite store from conftest's MLFLOW_TRACKING_URI) and provenance helpers."""
from __future__ import annotations

import os
import re
import socket
import time
from pathlib import Path

import pytest
from conftest import extra

from ragbench.config import RagbenchConfig
from ragbench.errors import DataError, TrackingError
from ragbench.provenance import data_hash, git_commit, package_version, provenance
from ragbench.tracking import Tracker, flatten_params, log_run, safe_metric_name, tracking_uri


def test_safe_metric_names():
    assert safe_metric_name("nDCG@5") == "nDCG_at_5"
    assert safe_metric_name("P(rel=2)@5") == "P_rel_2_at_5"
    assert safe_metric_name("R@100") == "R_at_100"
    assert safe_metric_name("paraphrase/nDCG@5") == "paraphrase/nDCG_at_5"


def test_flatten_params_of_config():
    flat = flatten_params(RagbenchConfig())
    assert flat["lsh.tables"] == "10" and flat["dcs.weights.intent"] == "0.5" and flat["seed"] == "42"
    assert flatten_params({"a": {"b": 1}, "c": None}) == {"a.b": "1", "c": "None"}


def test_default_uri_is_pinned_to_project_mlruns(monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    uri = tracking_uri()
    assert uri.startswith("sqlite:///") and uri.endswith("/mlruns/mlflow.db")
    assert Path(uri[len("sqlite:///"):]).parent.parent == Path(__file__).resolve().parents[1]


def test_log_run_params_metrics_tags_artifacts_and_nesting(tmp_path):
    MlflowClient = extra("mlflow.tracking", "track").MlflowClient

    art = tmp_path / "aggregate.csv"
    art.write_text("system,nDCG@5\nbm25,0.5\n")
    run_id = log_run("test-tracking", "golden", RagbenchConfig(), {"nDCG@5": 0.5, "R@5": 1.0, "bad": float("nan")},
                     {"config_hash": "abc", "git_commit": "unknown"}, [art])
    client = MlflowClient(tracking_uri())
    run = client.get_run(run_id)
    assert run.data.metrics == {"nDCG_at_5": 0.5, "R_at_5": 1.0}
    assert run.data.params["lsh.tables"] == "10"
    assert run.data.tags["config_hash"] == "abc"
    assert run.info.status == "FINISHED"
    assert [a.path for a in client.list_artifacts(run_id)] == ["aggregate.csv"]
    # Artifacts live next to the SQLite database, not in the working directory.
    db_dir = Path(tracking_uri()[len("sqlite:///"):]).parent
    assert client.get_experiment_by_name("test-tracking").artifact_location == (db_dir / "artifacts").as_uri()
    tracker = Tracker("test-tracking")
    with tracker.start_run("sweep") as parent:
        with parent.child("trial-0") as child:
            child.log_metrics({"nDCG@10": 0.25})
    assert client.get_run(child.run_id).data.tags["mlflow.parentRunId"] == parent.run_id
    with pytest.raises(RuntimeError):
        with tracker.start_run("boom") as failing:
            raise RuntimeError("x")
    assert client.get_run(failing.run_id).info.status == "FAILED"


def test_unreachable_server_raises_tracking_error_quickly(monkeypatch):
    extra("mlflow", "track")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens on this port now
    monkeypatch.delenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", raising=False)
    with pytest.raises(TrackingError, match=f"127.0.0.1:{port}.*Fix"):
        log_run("x", "y", {"a": 1}, {"m": 1.0}, uri=f"http://127.0.0.1:{port}", timeout=1)
    assert "MLFLOW_HTTP_REQUEST_MAX_RETRIES" not in os.environ  # limits restored after the call


def test_data_hash_depends_on_content_and_names_only(tmp_path):
    d = tmp_path / "data"
    (d / "sub").mkdir(parents=True)
    (d / "a.txt").write_text("alpha")
    (d / "sub" / "b.txt").write_text("beta")
    h1 = data_hash(d)
    os.utime(d / "a.txt", (time.time() + 100, time.time() + 100))
    (d / ".hidden").write_text("ignored")
    assert data_hash(d) == h1
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "sub").mkdir()
    (copy / "a.txt").write_text("alpha")
    (copy / "sub" / "b.txt").write_text("beta")
    assert data_hash(copy) == h1  # independent of the absolute location
    (d / "a.txt").write_text("alpha!")
    assert data_hash(d) != h1
    assert re.fullmatch(r"[0-9a-f]{16}", h1)
    with pytest.raises(DataError):
        data_hash(tmp_path / "missing")


def test_git_commit_and_provenance(tmp_path):
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", git_commit())
    assert git_commit(tmp_path) == "unknown"
    meta = provenance({"a": 1}, "d1", "m1")
    assert meta["data_hash"] == "d1" and meta["model_sha256"] == "m1" and len(meta["config_hash"]) == 16
    assert meta["package_version"] == package_version() == "0.1.0"


def test_without_mlflow_results_stay_local_and_the_message_says_how_to_install(monkeypatch):
    import builtins

    from ragbench.tracking import record_run

    real = builtins.__import__

    def no_mlflow(name, *args, **kwargs):
        if name == "mlflow" or name.startswith("mlflow."):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    rec = record_run("x", "y", RagbenchConfig(), {"m": 1.0})
    assert rec.run_id is None and rec.error is None and 'pip install "ragbench[track]"' in rec.skipped
    with pytest.raises(TrackingError, match=r'pip install "ragbench\[track\]"'):
        Tracker("x").start_run("y")
    assert record_run("x", "y", enabled=False).skipped == "MLflow logging off (--no-mlflow)"


def test_record_run_params_provenance_metrics_and_parent_from_the_environment(tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    from ragbench.config import config_hash
    from ragbench.tracking import record_run

    art = tmp_path / "per_query.csv"
    art.write_text("qid,value\nq1,1\n")
    cfg = RagbenchConfig()
    rec = record_run("test-record", "run-a", cfg, {"nDCG@10": 0.5, "label": "not a number", "n": 3},
                     params={"eval": {"k": 10}}, artifacts=[art, tmp_path / "missing.png", None],
                     data_hash="d1", model_sha256={"dense": "abc", "bm25": None})
    assert rec.error is None and rec.skipped is None
    client = MlflowClient(tracking_uri())
    run = client.get_run(rec.run_id)
    p = run.data.params
    assert (p["bm25.k1"], p["eval.k"], p["config_hash"], p["data_hash"], p["model_sha256"]) == (
        "1.5", "10", config_hash(cfg), "d1", "abc")
    assert p["git_commit"] == git_commit() and p["package_version"] == package_version()
    assert run.data.tags["config_hash"] == config_hash(cfg)
    assert run.data.metrics == {"nDCG_at_10": 0.5, "n": 3.0}
    assert [a.path for a in client.list_artifacts(rec.run_id)] == ["per_query.csv"]
    monkeypatch.setenv("RAGBENCH_PARENT_RUN_ID", rec.run_id)
    child = record_run("test-record", "run-b", None, {"x": 1.0})
    assert client.get_run(child.run_id).data.tags["mlflow.parentRunId"] == rec.run_id

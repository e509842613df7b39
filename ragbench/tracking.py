"""MLflow logging for experiments and sweeps.

Where runs go: ``$MLFLOW_TRACKING_URI`` when set, else ``sqlite:///<project>/mlruns/mlflow.db`` (pinned because
MLflow 3 otherwise creates ``mlflow.db`` in whatever the working directory is). For a SQLite store, experiments
created here keep their artifacts next to the database in ``<db folder>/artifacts`` (so under ``mlruns/`` by
default) instead of MLflow's cwd-relative ``./mlruns``.

What is logged: params = the flattened config (``lsh.tables``…), metrics with MLflow-safe names
(``"nDCG@5"`` → ``"nDCG_at_5"``), tags (config hash, data hash, model sha256, git commit, package version) and
artifact files. Runs nest: ``run.child("trial-3")`` (or ``parent_run_id=``) sets ``mlflow.parentRunId``.

Any failure to reach or write the store raises :class:`TrackingError` naming the URI; callers save results
locally first, so nothing is lost.
"""
from __future__ import annotations

import logging
import math
import os
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping
from urllib.parse import urlparse

from .config import flatten
from .errors import TrackingError
from .provenance import project_root

_BATCH = 100  # MLflow accepts at most 1000 metrics / 100 params per log_batch call


def tracking_uri() -> str:
    """``$MLFLOW_TRACKING_URI`` or the project's ``sqlite:///<project>/mlruns/mlflow.db``."""
    env = os.environ.get("MLFLOW_TRACKING_URI", "").strip()
    if env:
        return env
    folder = project_root() / "mlruns"
    return f"sqlite:///{(folder / 'mlflow.db').as_posix()}"


def _sqlite_path(uri: str) -> Path | None:
    if not uri.startswith("sqlite:///"):
        return None
    return Path(uri[len("sqlite:///"):])  # "sqlite:////abs/x.db" → "/abs/x.db"; "sqlite:///x.db" → "x.db"


def artifact_root(uri: str) -> str | None:
    """Artifact location for new experiments: ``<db folder>/artifacts`` for SQLite stores, else the server's."""
    db = _sqlite_path(uri)
    return (db.parent / "artifacts").resolve().as_uri() if db is not None else None


def safe_metric_name(name: str) -> str:
    """``"nDCG@5"`` → ``"nDCG_at_5"``, ``"P(rel=2)@5"`` → ``"P_rel_2_at_5"``: only letters, digits, ``_ - . /``."""
    s = str(name).replace("@", "_at_")
    s = re.sub(r"[^A-Za-z0-9_\-./]+", "_", s)
    return re.sub(r"_+", "_", s).strip("_") or "metric"


def flatten_params(params: Any, prefix: str = "") -> dict[str, str]:
    """A config dataclass or nested mapping → ``{"section.field": "value"}`` (values as strings, ≤ 6000 chars)."""
    return {name: str(value)[:6000] for name, value in flatten(params, prefix).items()}


@contextmanager
def _http_limits(timeout: float | None) -> Iterator[None]:
    """Bound MLflow's HTTP retries and timeout for the duration of a call (env vars MLflow reads per request)."""
    if timeout is None:
        yield
        return
    saved = {k: os.environ.get(k) for k in ("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "MLFLOW_HTTP_REQUEST_TIMEOUT")}
    os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] = "0"
    os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] = str(max(1, int(math.ceil(timeout))))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class TrackedRun:
    """An open MLflow run; use as a context manager (status FINISHED, or FAILED on an exception)."""

    def __init__(self, tracker: "Tracker", run_id: str) -> None:
        self.tracker = tracker
        self.run_id = run_id

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return self.tracker._call(what, fn, *args, **kwargs)

    def log_params(self, params: Any) -> None:
        from mlflow.entities import Param

        flat = flatten_params(params)
        items = [Param(k, v) for k, v in flat.items()]
        for i in range(0, len(items), _BATCH):
            self._call("log params", self.tracker.client.log_batch, self.run_id, params=items[i:i + _BATCH])

    def log_metrics(self, metrics: Mapping[str, float], step: int = 0) -> dict[str, str]:
        """Log finite metrics under safe names; returns {original name: logged name}. NaN values are skipped."""
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        names = {k: safe_metric_name(k) for k, v in metrics.items() if v is not None and math.isfinite(float(v))}
        items = [Metric(names[k], float(metrics[k]), now, step) for k in names]
        for i in range(0, len(items), _BATCH):
            self._call("log metrics", self.tracker.client.log_batch, self.run_id, metrics=items[i:i + _BATCH])
        return names

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        from mlflow.entities import RunTag

        items = [RunTag(str(k), str(v)) for k, v in tags.items() if v is not None]
        if items:
            self._call("set tags", self.tracker.client.log_batch, self.run_id, tags=items)

    def log_artifact(self, path: str | Path, artifact_path: str | None = None) -> None:
        p = Path(path)
        if p.is_dir():
            self._call("log artifacts", self.tracker.client.log_artifacts, self.run_id, str(p), artifact_path)
        else:
            self._call("log artifact", self.tracker.client.log_artifact, self.run_id, str(p), artifact_path)

    def child(self, run_name: str | None = None, tags: Mapping[str, Any] | None = None) -> "TrackedRun":
        """A nested run under this one."""
        return self.tracker.start_run(run_name, tags, parent_run_id=self.run_id)

    def end(self, status: str = "FINISHED") -> None:
        self._call("end run", self.tracker.client.set_terminated, self.run_id, status)

    def __enter__(self) -> "TrackedRun":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.end("FAILED" if exc_type else "FINISHED")


class Tracker:
    """One experiment in one tracking store. ``timeout`` (seconds) bounds HTTP calls to a remote server."""

    def __init__(self, experiment: str = "ragbench", uri: str | None = None, timeout: float | None = None) -> None:
        self.experiment = experiment
        self.uri = uri or tracking_uri()
        self.timeout = timeout
        self._client: Any = None
        self._experiment_id: str | None = None

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            with _http_limits(self.timeout):
                return fn(*args, **kwargs)
        except TrackingError:
            raise
        except Exception as exc:
            first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            raise TrackingError(
                f"MLflow tracking failed to {what} at {self.uri}: {first}. Fix: start the tracking server or set "
                "MLFLOW_TRACKING_URI to a reachable store (unset it to use the local mlruns/ store); results "
                "were saved locally.") from exc

    @property
    def client(self) -> Any:
        if self._client is None:
            db = _sqlite_path(self.uri)
            if db is not None:
                db.parent.mkdir(parents=True, exist_ok=True)
            try:
                from mlflow.tracking import MlflowClient
            except ImportError:
                raise TrackingError('MLflow is not installed, so nothing was logged (results are saved locally). '
                                    'Fix: pip install "ragbench[track]", or pass --no-mlflow.') from None
            self._client = self._call("connect", MlflowClient, tracking_uri=self.uri)
        return self._client

    def experiment_id(self) -> str:
        if self._experiment_id is None:
            exp = self._call("look up the experiment", self.client.get_experiment_by_name, self.experiment)
            if exp is None:
                self._experiment_id = self._call("create the experiment", self.client.create_experiment,
                                                 self.experiment, artifact_location=artifact_root(self.uri))
            else:
                self._experiment_id = exp.experiment_id
        return self._experiment_id

    def start_run(self, run_name: str | None = None, tags: Mapping[str, Any] | None = None,
                  parent_run_id: str | None = None) -> TrackedRun:
        all_tags = {str(k): str(v) for k, v in (tags or {}).items() if v is not None}
        if parent_run_id:
            all_tags["mlflow.parentRunId"] = parent_run_id
        run = self._call("start a run", self.client.create_run, self.experiment_id(), tags=all_tags,
                         run_name=run_name)
        return TrackedRun(self, run.info.run_id)


def log_run(experiment: str, run_name: str | None, params: Any = None, metrics: Mapping[str, float] | None = None,
            tags: Mapping[str, Any] | None = None, artifacts: list[str | Path] | tuple = (),
            uri: str | None = None, timeout: float | None = None, parent_run_id: str | None = None) -> str:
    """Log one finished run in a single call; returns its run id (raises :class:`TrackingError`)."""
    tracker = Tracker(experiment, uri, timeout)
    with tracker.start_run(run_name, tags, parent_run_id) as run:
        if params is not None:
            run.log_params(params)
        if metrics:
            run.log_metrics(metrics)
        for a in artifacts:
            run.log_artifact(a)
    return run.run_id


def is_remote(uri: str) -> bool:
    return urlparse(uri).scheme in ("http", "https", "databricks")


@dataclass
class Recorded:
    """What :func:`record_run` did: the MLflow run id, or the reason nothing was logged."""

    run_id: str | None = None
    error: str | None = None      # tracking failed (the caller exits 1)
    skipped: str | None = None    # tracking was not attempted (--no-mlflow, MLflow not installed)


def _model_sha(model_sha256: Any) -> str:
    if isinstance(model_sha256, Mapping):
        shas = sorted({str(v) for v in model_sha256.values() if v})
        return ",".join(shas) or "none"
    return str(model_sha256) if model_sha256 else "none"


def run_params(cfg: Any = None, params: Mapping[str, Any] | None = None, data_hash: str | None = None,
               model_sha256: Any = None, stages: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The params of an evaluating run: the flattened config under its dotted names, the command's own settings
    (``params``, nested or dotted), provenance (config hash, data hash, model sha256, package version, git
    commit), and ``stage.<name>``: each stage's parameter signature (stages or signature strings)."""
    from .stages import stage_signature

    from .config import config_hash
    from .provenance import git_commit, package_version

    out = flatten_params(cfg) if cfg is not None else {}
    out.update(flatten_params(params or {}))
    out.update({"config_hash": config_hash(cfg) if cfg is not None else "none", "data_hash": data_hash or "none",
                "model_sha256": _model_sha(model_sha256), "package_version": package_version(),
                "git_commit": git_commit()})
    out.update({f"stage.{k}": (v if isinstance(v, str) else stage_signature(v))[:6000]
                for k, v in (stages or {}).items()})
    return out


def record_run(experiment: str, run_name: str, cfg: Any = None, metrics: Mapping[str, Any] | None = None,
               params: Mapping[str, Any] | None = None, artifacts: Any = (), data_hash: str | None = None,
               model_sha256: Any = None, tags: Mapping[str, Any] | None = None, enabled: bool = True,
               timeout: float | None = 10, parent_run_id: str | None = None,
               stages: Mapping[str, Any] | None = None) -> Recorded:
    """Log one finished evaluation as an MLflow run, the way every evaluating command does.

    ``metrics``: every number of the result (non-numeric and NaN values are left out); ``artifacts``: files or
    folders (the run folder, plots; missing paths are skipped). Provenance goes into both params and tags. Never
    raises for tracking problems: a failure comes back in ``error`` (the results were saved before), and a missing
    MLflow in ``skipped`` with the install line."""
    if not enabled:
        return Recorded(skipped="MLflow logging off (--no-mlflow)")
    try:
        import mlflow  # noqa: F401
    except ImportError:
        return Recorded(skipped='MLflow is not installed, so this run was not logged (results are saved locally). '
                                'Fix: pip install "ragbench[track]", or set MLFLOW_TRACKING_URI to a server.')
    for name in ("mlflow", "alembic"):  # database set-up chatter on first use; leave a configured level alone
        if logging.getLogger(name).level == logging.NOTSET:
            logging.getLogger(name).setLevel(logging.WARNING)
    all_params = run_params(cfg, params, data_hash, model_sha256, stages)
    # A notebook executed by `ragbench batch` logs its runs nested under the batch's notebook run.
    parent_run_id = parent_run_id or os.environ.get("RAGBENCH_PARENT_RUN_ID") or None
    numeric = {}
    for k, v in (metrics or {}).items():
        try:
            numeric[str(k)] = float(v)
        except (TypeError, ValueError):
            continue
    provenance_tags = {k: all_params[k] for k in ("config_hash", "data_hash", "model_sha256", "package_version",
                                                   "git_commit")}
    try:
        tracker = Tracker(experiment, timeout=timeout)
        with tracker.start_run(run_name, {**provenance_tags, **dict(tags or {})}, parent_run_id) as run:
            run.log_params(all_params)
            run.log_metrics(numeric)
            for a in artifacts or ():
                if a is not None and Path(a).exists():
                    run.log_artifact(a)
        return Recorded(run_id=run.run_id)
    except TrackingError as exc:
        return Recorded(error=str(exc))

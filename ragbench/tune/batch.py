"""Notebook batches: a list of notebooks × parameter sets executed with papermill.

A batch file (YAML; relative paths are relative to the current directory)::

    output_dir: notebooks/runs        # executed notebooks land here (ignored by git)
    cwd: notebooks                    # working directory of the kernels (default: each notebook's folder)
    kernel: python3
    mlflow_experiment: ragbench-batch
    jobs:
      - notebook: notebooks/10_tune_lsh.ipynb
        parameters: {trials: 6}
      - notebook: notebooks/11_tune_chunking.ipynb
        parameters: [{trials: 4}, {trials: 8, seed: 1}]     # one execution per parameter set

Each execution writes ``<output_dir>/<stem>[-<i>].ipynb`` (with its outputs, or up to the failing cell) and is
logged as one MLflow run (params = the notebook's parameters, the executed notebook as an artifact). The run is
opened before the notebook executes and its id passed to the kernel as ``RAGBENCH_PARENT_RUN_ID``, so every
evaluation the notebook logs (:func:`ragbench.tracking.record_run`) becomes a nested run of it; afterwards the
notebook run also gets those runs' metrics as ``<nested run name>.<metric>``. A failing notebook is reported and
the batch goes on; the caller exits non-zero when any failed.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..config import read_yaml_mapping
from ..errors import ConfigError, TrackingError, require_extra

#: Environment variable carrying the batch's notebook run id into the kernel (read by ragbench.tracking).
PARENT_ENV = "RAGBENCH_PARENT_RUN_ID"
BATCH_KEYS = ("output_dir", "cwd", "kernel", "mlflow_experiment", "jobs", "timeout")


@dataclass(frozen=True)
class Job:
    notebook: Path
    parameters: Mapping[str, Any]
    output: Path


@dataclass(frozen=True)
class Batch:
    jobs: tuple[Job, ...]
    cwd: Path | None = None
    kernel: str = "python3"
    mlflow_experiment: str = "ragbench-batch"
    timeout: int | None = None


@dataclass
class JobResult:
    notebook: str
    parameters: dict[str, Any]
    output: str
    ok: bool
    seconds: float
    error: str = ""
    mlflow_run_id: str | None = None
    tracking_error: str | None = None


@dataclass
class BatchReport:
    results: list[JobResult] = field(default_factory=list)

    @property
    def failed(self) -> list[JobResult]:
        return [r for r in self.results if not r.ok]

    @property
    def tracking_errors(self) -> list[str]:
        return [r.tracking_error for r in self.results if r.tracking_error]


def load_batch(path: str | Path) -> Batch:
    """Read and check a batch file (every notebook must exist; parameter sets must be mappings)."""
    p = Path(path)
    data = read_yaml_mapping(p, "batch")
    unknown = sorted(set(data) - set(BATCH_KEYS))
    if unknown:
        raise ConfigError(f"batch file {p}: unknown key(s) {', '.join(unknown)}. Valid keys: {', '.join(BATCH_KEYS)}.")
    raw_jobs = data.get("jobs")
    if not isinstance(raw_jobs, list) or not raw_jobs:
        raise ConfigError(f"batch file {p}: 'jobs' must be a non-empty list of {{notebook, parameters}}.")
    out_dir = Path(data.get("output_dir") or "notebooks/runs")
    jobs: list[Job] = []
    used: set[Path] = set()
    for i, raw in enumerate(raw_jobs):
        if not isinstance(raw, Mapping) or "notebook" not in raw or set(raw) - {"notebook", "parameters", "name"}:
            raise ConfigError(f"batch file {p}: job {i} must be a mapping with notebook, optional parameters and "
                              f"name; found {raw!r}.")
        nb = Path(str(raw["notebook"]))
        if nb.suffix != ".ipynb" or not nb.is_file():
            raise ConfigError(f"batch file {p}: job {i}: notebook {nb} does not exist (or is not an .ipynb).")
        sets = raw.get("parameters") or {}
        sets = [sets] if isinstance(sets, Mapping) else sets
        if not isinstance(sets, list) or not all(isinstance(s, Mapping) for s in sets) or not sets:
            raise ConfigError(f"batch file {p}: job {i}: parameters must be a mapping or a list of mappings.")
        stem = str(raw.get("name") or nb.stem)
        for j, params in enumerate(sets):
            out = out_dir / (f"{stem}.ipynb" if len(sets) == 1 else f"{stem}-{j}.ipynb")
            if out in used:
                raise ConfigError(f"batch file {p}: two executions would write {out}. Fix: give the jobs names.")
            used.add(out)
            jobs.append(Job(nb, dict(params), out))
    timeout = data.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0):
        raise ConfigError(f"batch file {p}: timeout must be a whole number of seconds > 0 per cell, found "
                          f"{timeout!r}. Fix: e.g. 'timeout: 600', or leave it out for no limit.")
    return Batch(tuple(jobs), Path(data["cwd"]) if data.get("cwd") else None, str(data.get("kernel") or "python3"),
                 str(data.get("mlflow_experiment") or "ragbench-batch"), timeout)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    ename = getattr(exc, "ename", None)
    if ename:  # papermill: the notebook's own exception
        return f"{ename}: {getattr(exc, 'evalue', '')}".strip()
    return (text.splitlines()[-1] if text else type(exc).__name__)[:500]


def run_batch(batch: Batch, track: bool = True, show_progress: bool = False) -> BatchReport:
    """Execute every job (failures recorded, not raised) and log each to MLflow when ``track``."""
    pm = require_extra("papermill", "notebooks", "ragbench batch (running notebooks)")
    from tqdm.auto import tqdm

    report = BatchReport()
    for job in tqdm(batch.jobs, desc="notebooks", disable=not show_progress):
        job.output.parent.mkdir(parents=True, exist_ok=True)
        run, tracking_error = None, None
        if track:
            try:
                run = _open(batch, job)
            except TrackingError as exc:
                tracking_error = f"{exc} The executed notebook is kept at {job.output}."
        t0 = time.perf_counter()
        error = ""
        saved = os.environ.get(PARENT_ENV)
        if run is not None:
            os.environ[PARENT_ENV] = run.run_id  # the kernel inherits it: the notebook's runs nest under this one
        try:
            pm.execute_notebook(str(job.notebook), str(job.output), parameters=dict(job.parameters),
                                kernel_name=batch.kernel, progress_bar=False,
                                cwd=str(batch.cwd or job.notebook.parent),
                                **({"execution_timeout": batch.timeout} if batch.timeout else {}))
        except Exception as exc:  # noqa: BLE001 - a failing notebook must not stop the batch
            error = _first_line(exc)
        finally:
            if saved is None:
                os.environ.pop(PARENT_ENV, None)
            else:
                os.environ[PARENT_ENV] = saved
        res = JobResult(str(job.notebook), dict(job.parameters), str(job.output), not error,
                        time.perf_counter() - t0, error, tracking_error=tracking_error)
        if run is not None:
            try:
                _finish(run, job, res)
                res.mlflow_run_id = run.run_id
            except TrackingError as exc:
                res.tracking_error = f"{exc} The executed notebook is kept at {job.output}."
        report.results.append(res)
    return report


def _open(batch: Batch, job: Job) -> Any:
    """Start the notebook's MLflow run (before execution, so the notebook's own runs can nest under it)."""
    from ..provenance import git_commit, package_version
    from ..tracking import Tracker, is_remote, tracking_uri

    uri = tracking_uri()
    tracker = Tracker(batch.mlflow_experiment, uri, timeout=30 if is_remote(uri) else None)
    tags = {"ragbench.kind": "notebook", "notebook": str(job.notebook), "git_commit": git_commit(),
            "package_version": package_version()}
    run = tracker.start_run(job.output.stem, tags)
    run.log_params({"notebook": str(job.notebook), **{f"param.{k}": v for k, v in job.parameters.items()}})
    return run


def _finish(run: Any, job: Job, res: JobResult) -> None:
    """Seconds, the nested runs' metrics (``<run name>.<metric>``), the executed notebook; then close the run."""
    metrics: dict[str, float] = {"seconds": res.seconds}
    for child in _nested(run):
        name = child.info.run_name or child.info.run_id[:8]
        metrics.update({f"{name}.{k}": v for k, v in child.data.metrics.items()})
    run.log_metrics(metrics)
    if res.error:
        run.set_tags({"error": res.error})
    if job.output.exists():
        run.log_artifact(job.output)
    run.end("FINISHED" if res.ok else "FAILED")


def _nested(run: Any) -> list[Any]:
    """Runs (in any experiment) whose parent is ``run``."""
    client = run.tracker.client
    experiments = run._call("list experiments", client.search_experiments)
    ids = [e.experiment_id for e in experiments]
    return list(run._call("find the nested runs", client.search_runs, ids,
                          filter_string=f"tags.mlflow.parentRunId = '{run.run_id}'")) if ids else []

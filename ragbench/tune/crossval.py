"""Nested cross-validation of a tuning experiment: how well does *tuning this space this way* do on data it did not
choose on?

An experiment with ``split: {folds: K, seed: S}`` (the units dealt into K seeded folds) or ``split: {folds: sets}``
(each golden set of a ``golden:A,B,…`` dataset in turn) runs one ordinary study per fold (:func:`run_study`): the
sweep chooses on the other folds and the best configuration is confirmed on the fold's own units against the base.
Every unit is held out by exactly one fold, so the held-out values of all folds together are a cross-validated
estimate over the whole dataset, compared unit by unit with the base configuration (one paired test over all units).
Each fold's choice is kept, so a reader sees whether the folds agree (a parameter chosen alike on every fold is
settled; one that wanders is fitted to its tuning data).

Results go to ``runs/<name>/``: one folder per fold (the study's own results, ``runs/<name>/<fold>/``),
``crossval.csv`` (a row per fold: sizes, best parameters, tuning and held-out scores, its paired test),
``crossval_per_query.csv`` (each unit's held-out values under its fold's choice and under the base),
``crossval.png`` (each fold's held-out score next to the base's, and both pooled) and ``crossval.json``. MLflow
gets one run (``ragbench.kind: crossval``) with the pooled numbers and files, and the folds' study runs are nested
under it. Nothing is promoted: the estimate is of the procedure, and the configuration to ship is tuned on all the
data by the same experiment without ``folds``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import TrackingError
from ..eval import stats
from ..eval.harness import write_atomic
from ..provenance import git_commit, package_version
from . import report
from .objectives import fold_labels, make_objective
from .run import TuneResult, run_study
from .space import TuneSpec
from .sweep import Prepared, check_stages, prepare

#: Columns of ``crossval.csv`` before the per-parameter ``param:<name>`` columns.
FOLD_COLUMNS = ["fold", "tune_n", "heldout_n", "trials", "best_trial", "tune_score", "heldout_score",
                "baseline_heldout_score", "p_value", "wins", "ties", "losses"]


@dataclass
class CrossvalResult:
    """The folds' studies and the pooled held-out comparison of each fold's choice against the base."""

    name: str
    metric: str
    folds: list[TuneResult]
    heldout_score: float           # mean over every unit of its fold's tuned value
    baseline_heldout_score: float  # the base configuration on the same units
    p_value: float                 # paired permutation test over all units, two-sided
    n: int
    wins: int
    ties: int
    losses: int
    ci_low: float
    ci_high: float
    table: pd.DataFrame = field(repr=False)
    per_query: pd.DataFrame = field(repr=False)
    study_dir: Path = Path(".")
    mlflow_run_id: str | None = None
    tracking_error: str | None = None
    summary: dict[str, Any] = field(default_factory=dict)

    def stability(self) -> dict[str, list[Any]]:
        """Each tuned parameter → the value each fold chose (in fold order)."""
        names = sorted({k for f in self.folds for k in f.best_params})
        return {k: [f.best_params.get(k) for f in self.folds] for k in names}

    def json_line(self) -> dict[str, Any]:
        """The ``--json`` record of ``ragbench tune`` for a cross-validated experiment."""
        return {"crossval": True, "metric": self.metric, "heldout_score": self.heldout_score,
                "baseline_heldout_score": self.baseline_heldout_score, "p_value": self.p_value, "n": self.n,
                "wins": self.wins, "ties": self.ties, "losses": self.losses,
                "folds": [{"fold": r["fold"], **{k: r[k] for k in FOLD_COLUMNS[1:]},
                           "best_params": f.best_params, "mlflow_run_id": f.mlflow_run_id}
                          for r, f in zip(self.table.to_dict(orient="records"), self.folds)],
                "results": str(self.study_dir), "mlflow_run_id": self.mlflow_run_id}


def run_crossval(spec: TuneSpec, trials: int | None = None, workers: int = 1, storage: str | None = None,
                 track: bool = True, show_progress: bool = False, n_resamples: int = 10000) -> CrossvalResult:
    """Run (or resume) one study per fold of a cross-validated experiment and pool their held-out confirmations."""
    if spec.folds is None:
        raise ValueError(f"experiment {spec.name!r} has no split.folds; run it with run_study.")
    check_stages(spec)
    objective = make_objective(spec.dataset, spec.objective, spec.options)  # loaded once, shared by every fold
    labels = fold_labels(objective.units(), spec.folds, getattr(objective, "set_of", None))
    prepared = [prepare(replace(spec, fold=label), objective) for label in labels]  # every split checked first
    results = []
    for prep in prepared:
        # An explicit storage is shared by the folds (each its own study, ``name.fold``); by default each fold keeps
        # its journal in its own folder, so one fold can be resumed or deleted alone.
        results.append(run_study(prep.spec, trials=trials, workers=workers, storage=storage, track=track,
                                 show_progress=show_progress, prepared=prep, n_resamples=n_resamples))
    return _pool(spec, labels, results, prepared, track, n_resamples)


def _pool(spec: TuneSpec, labels: list[str], results: list[TuneResult], prepared: list[Prepared], track: bool,
          n_resamples: int) -> CrossvalResult:
    metric = results[0].metric
    per_query = pd.concat([r.confirmation.assign(fold=label) for label, r in zip(labels, results)],
                          ignore_index=True)
    per_query = per_query[["fold", "system", "qid", "measure", "value"]]
    wide = (per_query[per_query["measure"] == metric]
            .pivot_table(index=["fold", "qid"], columns="system", values="value", aggfunc="first").dropna())
    c = stats.compare(wide["tuned"].to_numpy(), wide["base"].to_numpy(), seed=spec.seed, n_resamples=n_resamples)
    rows = []
    for label, r, prep in zip(labels, results, prepared):
        conf = r.summary["confirmation"]
        rows.append({"fold": label, "tune_n": len(prep.tune), "heldout_n": len(prep.heldout), "trials": r.trials,
                     "best_trial": r.best_trial, "tune_score": r.tune_score, "heldout_score": r.heldout_score,
                     "baseline_heldout_score": r.baseline_heldout_score, "p_value": r.p_value,
                     "wins": conf["wins"], "ties": conf["ties"], "losses": conf["losses"],
                     **{f"param:{k}": v for k, v in sorted(r.best_params.items())}})
    table = pd.DataFrame(rows)
    out = spec.study_dir
    out.mkdir(parents=True, exist_ok=True)
    result = CrossvalResult(spec.name, metric, results, c.mean_a, c.mean_b, c.permutation_p, c.n, c.wins, c.ties,
                            c.losses, c.ci_low, c.ci_high, table, per_query, out)
    summary: dict[str, Any] = {
        "study": spec.name, "dataset": spec.dataset, "metric": metric, "folds": spec.folds, "fold_labels": labels,
        "heldout_score": c.mean_a, "baseline_heldout_score": c.mean_b, "p_value": c.permutation_p, "t_p": c.t_p,
        "wilcoxon_p": c.wilcoxon_p, "ci_low": c.ci_low, "ci_high": c.ci_high, "n": c.n, "wins": c.wins,
        "ties": c.ties, "losses": c.losses, "stability": result.stability(),
        "fold_runs": {label: r.mlflow_run_id for label, r in zip(labels, results)},
        "data_hash": prepared[0].objective.data_hash, "git_commit": git_commit(), "package_version": package_version(),
    }
    write_atomic(out / "crossval.csv", table.to_csv(index=False))
    write_atomic(out / "crossval_per_query.csv", per_query.to_csv(index=False))
    report.plot_crossval(table, (c.mean_a, c.mean_b), metric, spec.name, out / "crossval.png")
    fold_errors = [r.tracking_error for r in results if r.tracking_error]
    if fold_errors:
        result.tracking_error = fold_errors[0]
    elif track:
        try:
            result.mlflow_run_id = _log(spec, result, summary, [out / "crossval.csv", out / "crossval_per_query.csv",
                                                         out / "crossval.png"], _previous_run(out))
        except TrackingError as exc:
            result.tracking_error = (f"{exc} The cross-validation itself is safe: its results are in {out}; run the "
                                     "same command again to log it once the tracking store is reachable.")
    summary["mlflow_run_id"] = result.mlflow_run_id
    write_atomic(out / "crossval.json", json.dumps(summary, indent=2, sort_keys=True, default=str))
    result.summary = summary
    return result


def _previous_run(out: Path) -> str | None:
    """The MLflow run id an earlier run of this cross-validation recorded in ``crossval.json`` (None: none)."""
    try:
        return json.loads((out / "crossval.json").read_text(encoding="utf-8")).get("mlflow_run_id") or None
    except (OSError, ValueError, AttributeError):
        return None


def _log(spec: TuneSpec, result: CrossvalResult, summary: dict[str, Any], artifacts: list[Path],
         previous: str | None = None) -> str:
    """One MLflow run for the cross-validation, with the folds' study runs nested under it. A re-run logs into the
    run an earlier one made (``previous``) when the tracking store still has it in this experiment."""
    from ..config import flatten
    from ..tracking import TrackedRun, Tracker, is_remote, tracking_uri

    uri = tracking_uri()
    tracker = Tracker(spec.mlflow_experiment, uri, timeout=30 if is_remote(uri) else None)
    tags = {"ragbench.kind": "crossval", "optuna.study": spec.name, "git_commit": summary["git_commit"],
            "package_version": summary["package_version"], "data_hash": summary["data_hash"]}
    if previous and _run_exists(tracker, previous):
        run = TrackedRun(tracker, previous)
        run.set_tags(tags)
    else:
        run = tracker.start_run(f"{spec.name}.crossval", tags)
    run.log_params({"base": flatten(spec.base), "study": {
        "dataset": spec.dataset, "metrics": ",".join(f"{m}:{d}" for m, d in spec.metrics), "folds": spec.folds,
        "split_seed": spec.split_seed, "sampler": spec.sampler, "seed": spec.seed,
        "space": ", ".join(p.name for p in spec.space)}})
    metrics = {k: float(summary[k]) for k in ("heldout_score", "baseline_heldout_score", "p_value", "ci_low",
                                              "ci_high", "n", "wins", "ties", "losses")}
    for f in result.table.to_dict(orient="records"):
        metrics.update({f"fold.{f['fold']}.heldout_score": float(f["heldout_score"]),
                        f"fold.{f['fold']}.baseline_heldout_score": float(f["baseline_heldout_score"])})
    run.log_metrics(metrics)
    for path in artifacts:
        run.log_artifact(path)
    for fold in result.folds:
        if fold.mlflow_run_id:
            TrackedRun(tracker, fold.mlflow_run_id).set_tags({"mlflow.parentRunId": run.run_id,
                                                              "ragbench.crossval": spec.name})
    run.end("FINISHED")
    return run.run_id


def _run_exists(tracker: Any, run_id: str) -> bool:
    """Whether the tracking store holds ``run_id`` in the tracker's experiment (another store or a deleted run:
    no, and a new run is made)."""
    try:
        run = tracker.client.get_run(run_id)
    except Exception:  # noqa: BLE001 - MLflow raises its own error for an unknown id; any failure means "make one"
        return False
    return run.info.experiment_id == tracker.experiment_id() and run.info.lifecycle_stage == "active"

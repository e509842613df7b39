"""Study outputs: the trials table, the Pareto front, plots (matplotlib, Agg) and the MLflow record.

MLflow gets one parent run per study (its id kept in the study's ``mlflow_run_id`` attribute, so a resumed study
keeps logging into it) and one nested run per finished trial (params = the trial's flattened config; metrics = the
objective values and the per-query means under MLflow-safe names; tags = config hash, data hash, model sha256, git
commit, package version, Optuna state and error). Trials already logged are remembered in the study, so a resumed
or re-run study logs only what is new. Everything is read back from the Optuna storage, so a tracking failure loses
nothing.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from ..config import config_hash, flatten
from ..errors import require_extra
from ..eval.plots import pyplot
from .storage import quiet_experimental
from .space import TuneSpec

STATUS = {"COMPLETE": "FINISHED", "PRUNED": "KILLED", "FAIL": "FAILED"}


def trials_table(study: Any, metrics: Sequence[str],
                 tidy: Callable[[Mapping[str, Any]], Mapping[str, Any]] = dict) -> pd.DataFrame:
    """One row per trial: number, state, objective values, params, per-query means, duration, error, and the
    source hash of the code that scored it."""
    rows = []
    for t in study.get_trials(deepcopy=False):
        row: dict[str, Any] = {"number": t.number, "state": t.state.name}
        # A pruned trial's Optuna value is its last per-query report, not a mean: its partial means are in metric:*.
        vals = t.values if t.values is not None and t.state.name == "COMPLETE" else [math.nan] * len(metrics)
        row.update({f"value:{m}": v for m, v in zip(metrics, vals)})
        row.update({f"param:{k}": v for k, v in sorted(tidy(t.params).items())})
        row.update({f"metric:{k}": v for k, v in (t.user_attrs.get("metrics") or {}).items()})
        row["duration_s"] = t.duration.total_seconds() if t.duration is not None else math.nan
        row["error"] = t.user_attrs.get("error", "")
        row["code_hash"] = t.user_attrs.get("code_hash", "")
        rows.append(row)
    return pd.DataFrame(rows)


def pareto_table(study: Any, metrics: Sequence[str],
                 tidy: Callable[[Mapping[str, Any]], Mapping[str, Any]] = dict) -> pd.DataFrame:
    """The Pareto-optimal trials (the best trial for a single objective)."""
    front = study.best_trials
    rows = [{"number": t.number, **{m: v for m, v in zip(metrics, t.values)},
             **{f"param:{k}": v for k, v in sorted(tidy(t.params).items())}} for t in front]
    return pd.DataFrame(rows).sort_values("number").reset_index(drop=True) if rows else pd.DataFrame()


def _save(plt: Any, fig: Any, path: Path) -> Path:
    """Write a figure as a PNG without a timestamp or software tag (byte-identical for the same numbers)."""
    fig.tight_layout()
    fig.savefig(path, dpi=90, metadata={"Software": None})
    plt.close(fig)
    return path


def _complete(study: Any) -> list[Any]:
    return [t for t in study.get_trials(deepcopy=False) if t.state.name == "COMPLETE"]


def plot_history(study: Any, spec: TuneSpec, metrics: Sequence[str], path: Path) -> Path | None:
    """Objective value per trial and the running best (primary objective)."""
    plt = pyplot("tuning plots")

    done = _complete(study)
    if not done:
        return None
    xs = [t.number for t in done]
    ys = [t.values[0] for t in done]
    best, run = [], None
    maximize = spec.directions[0] == "maximize"
    for y in ys:
        run = y if run is None else (max(run, y) if maximize else min(run, y))
        best.append(run)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.scatter(xs, ys, s=16, label="trial")
    ax.step(xs, best, where="post", color="tab:red", label="best so far")
    ax.set_xlabel("trial")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # trial numbers are whole
    ax.set_ylabel(metrics[0])
    ax.set_title(f"{spec.study_name}: optimisation history")
    ax.legend(loc="best")
    return _save(plt, fig, path)


def plot_crossval(table: pd.DataFrame, pooled: tuple[float, float], metric: str, name: str, path: Path) -> Path:
    """Held-out score of each fold's choice next to the base's on the same units, and both pooled over every unit
    (the cross-validated estimate), as grouped bars."""
    plt = pyplot("tuning plots")

    labels = [str(f) for f in table["fold"]] + ["pooled"]
    tuned = list(table["heldout_score"]) + [pooled[0]]
    base = list(table["baseline_heldout_score"]) + [pooled[1]]
    xs = range(len(labels))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(labels) + 2), 3.8))
    ax.bar([x - 0.2 for x in xs], tuned, width=0.4, label="each fold's choice", color="tab:blue")
    ax.bar([x + 0.2 for x in xs], base, width=0.4, label="base", color="tab:gray")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, rotation=45, ha="right")
    ax.set_ylabel(f"held-out {metric}")
    ax.set_title(f"{name}: nested cross-validation")
    top = max([*tuned, *base, 0.0])
    ax.set_ylim(0, top * 1.2 if top > 0 else 1.0)  # room for the legend above the bars
    ax.legend(loc="upper center", ncol=2)
    return _save(plt, fig, path)


def importances(study: Any, seed: int = 0) -> dict[str, float]:
    """fANOVA importance of each parameter for the primary objective ({} when it cannot be computed)."""
    optuna = require_extra("optuna", "tune", "parameter importance")

    done = _complete(study)
    if len(done) < 2:
        return {}
    try:
        with quiet_experimental():
            return optuna.importance.get_param_importances(
                study, target=lambda t: t.values[0],
                evaluator=optuna.importance.FanovaImportanceEvaluator(seed=seed))
    except (RuntimeError, ValueError, ZeroDivisionError):  # e.g. every completed trial had the same params
        return {}


def plot_importance(imp: dict[str, float], spec: TuneSpec, path: Path) -> Path | None:
    plt = pyplot("tuning plots")

    if not imp:
        return None
    names = list(imp)[::-1]
    fig, ax = plt.subplots(figsize=(6, max(2.5, 0.8 + 0.4 * len(names))))
    ax.barh(names, [imp[n] for n in names], color="tab:blue")
    ax.set_xlabel("importance (fANOVA)")
    ax.set_title(f"{spec.study_name}: parameter importance")
    return _save(plt, fig, path)


def plot_pareto(study: Any, metrics: Sequence[str], spec: TuneSpec, path: Path) -> Path | None:
    plt = pyplot("tuning plots")

    if len(metrics) < 2:
        return None
    done = _complete(study)
    front = {t.number for t in study.best_trials}
    if not done:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    other = [t for t in done if t.number not in front]
    best = sorted((t for t in done if t.number in front), key=lambda t: t.values[0])
    ax.scatter([t.values[0] for t in other], [t.values[1] for t in other], s=16, color="tab:gray", label="trial")
    ax.plot([t.values[0] for t in best], [t.values[1] for t in best], "o-", color="tab:red", label="Pareto front")
    ax.set_xlabel(f"{metrics[0]} ({spec.directions[0]})")
    ax.set_ylabel(f"{metrics[1]} ({spec.directions[1]})")
    ax.set_title(f"{spec.study_name}: Pareto front")
    ax.legend(loc="best")
    return _save(plt, fig, path)


# ---------------------------------------------------------------------------------------------------- MLflow


def log_study(study: Any, spec: TuneSpec, prepared: Any, summary: dict[str, Any], artifacts: Sequence[Path],
              provenance_tags: dict[str, Any]) -> str:
    """Log the study (parent run) and every finished trial not yet logged (nested runs); returns the parent id.
    Raises :class:`~ragbench.errors.TrackingError` on any tracking failure."""
    from ..tracking import TrackedRun, Tracker, is_remote, tracking_uri

    uri = tracking_uri()
    tracker = Tracker(spec.mlflow_experiment, uri, timeout=30 if is_remote(uri) else None)  # no endless retries
    parent_id = study.user_attrs.get("mlflow_run_id")
    if parent_id is None:
        parent = tracker.start_run(spec.study_name, {"ragbench.kind": "study", "optuna.study": spec.study_name,
                                               **provenance_tags})
        study.set_user_attr("mlflow_run_id", parent.run_id)
        parent.log_params({"base": flatten(spec.base), "study": {
            "dataset": spec.dataset, "metrics": ",".join(f"{m}:{d}" for m, d in spec.metrics),
            "sampler": spec.sampler, "seed": spec.seed, "pruner": spec.pruner,
            **({"heldout_sets": ",".join(spec.heldout_sets)} if spec.heldout_sets else
               {"heldout": spec.heldout, "split_seed": spec.split_seed}),
            "space": ", ".join(p.name for p in spec.space)}})
    else:
        parent = TrackedRun(tracker, parent_id)
    logged: dict[str, str] = dict(study.user_attrs.get("mlflow_trials") or {})
    objective = prepared.objective
    for t in study.get_trials(deepcopy=False):
        if t.state.name not in STATUS or str(t.number) in logged:
            continue
        try:
            cfg = spec.config_for(t.params)
            chash, model = config_hash(cfg), objective.model_sha256(cfg)
        except Exception:  # noqa: BLE001 - a trial whose params were invalid still gets its run
            cfg, chash, model = None, None, None
        child = parent.child(f"trial-{t.number}", {
            "ragbench.kind": "trial", "optuna.trial": t.number, "optuna.state": t.state.name,
            "config_hash": chash, "data_hash": objective.data_hash, "model_sha256": model,
            "git_commit": provenance_tags.get("git_commit"), "package_version": provenance_tags.get("package_version"),
            "error": t.user_attrs.get("error") or None})
        child.log_params(flatten(cfg) if cfg is not None else {f"param.{k}": v for k, v in spec.tidy(t.params).items()})
        metrics: dict[str, float] = dict(t.user_attrs.get("metrics") or {})
        if t.values is not None and t.state.name == "COMPLETE":
            metrics.update({f"objective.{m}": v for m, v in zip(prepared.metrics, t.values)})
        if t.duration is not None:
            metrics["duration_s"] = t.duration.total_seconds()
        child.log_metrics(metrics)
        child.end(STATUS[t.state.name])
        logged[str(t.number)] = child.run_id
        study.set_user_attr("mlflow_trials", logged)  # after each run: a failure half-way resumes cleanly
    parent.log_metrics({k: summary[k] for k in ("tune_score", "heldout_score", "baseline_heldout_score", "p_value",
                                                 "trials") if isinstance(summary.get(k), (int, float))})
    parent.set_tags({"best_trial": summary.get("best_trial"), "data_hash": objective.data_hash,
                     "config_hash": summary.get("config_hash"), "model_sha256": summary.get("model_sha256")})
    for a in artifacts:
        if Path(a).exists():
            parent.log_artifact(a)
    parent.end("FINISHED")
    return parent.run_id

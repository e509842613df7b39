"""One call for a whole tuning experiment: sweep → local results → held-out confirmation → tuned YAML → MLflow.

    res = run_study(load_spec("experiments/golden_lsh.yaml"), trials=20, workers=2)
    res.best_params, res.tune_score, res.heldout_score, res.baseline_heldout_score, res.p_value

Local results (``<experiment folder>/runs/<name>/``): ``trials.csv``, ``pareto.csv``, ``history.png``,
``importance.png``, ``pareto.png`` (two objectives), ``confirmation_per_query.csv``, ``summary.json``, the tuned
config ``tuned.yaml`` and, by default, the Optuna journal ``study.journal`` — never a tracked file. With
``promote_result=True`` the tuned config is copied to ``<experiment folder>/tuned/<name>.yaml`` only when its held-out
improvement is significant under the experiment's ``confirm`` test (``force=True`` overrides; the file's header
records it). Everything is written before MLflow is contacted, so a tracking failure (reported in
``tracking_error``) loses nothing.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..config import config_hash
from ..errors import EXIT_FAILURES, DataError, TrackingError
from ..provenance import git_commit, package_version
from . import report
from .confirm import Promotion, confirm, confirmation_dict, promote, write_tuned
from .space import TuneSpec
from .storage import describe
from .sweep import Prepared, optimize, prepare, storage_url


@dataclass
class TuneResult:
    name: str
    storage: str
    best_trial: int
    best_params: dict[str, Any]
    tune_score: float
    heldout_score: float
    baseline_heldout_score: float
    p_value: float
    trials: int
    states: dict[str, int]
    metric: str
    pareto: list[dict[str, Any]] = field(default_factory=list)
    study_dir: Path | None = None
    tuned_path: Path | None = None
    mlflow_run_id: str | None = None
    tracking_error: str | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    promotion: Promotion | None = None
    #: The held-out confirmation's per-unit values (``confirmation_per_query.csv``): system, qid, measure, value.
    confirmation: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    def json_line(self) -> dict[str, Any]:
        """The ``--json`` record."""
        return {"best_params": self.best_params, "tune_score": self.tune_score, "heldout_score": self.heldout_score,
                "baseline_heldout_score": self.baseline_heldout_score, "p_value": self.p_value,
                "trials": self.trials, "tuned_path": str(self.tuned_path),
                "promoted": str(self.promotion.path) if self.promotion and self.promotion.promoted else None,
                "mlflow_run_id": self.mlflow_run_id}


class NoTrialCompleted(DataError):
    """Every trial failed or was pruned: the job ran and recorded its failures (exit status 1)."""

    exit_status = EXIT_FAILURES


def best_trial(study: Any, spec: TuneSpec) -> Any:
    """The best complete trial; for several objectives the Pareto trial best on the primary one (ties: lowest
    number)."""
    front = study.best_trials
    if not front:
        errors = [t.user_attrs.get("error") for t in study.get_trials(deepcopy=False) if t.user_attrs.get("error")]
        first = f" First error: {errors[0]}" if errors else ""
        raise NoTrialCompleted(f"study {spec.study_name!r}: no trial completed, so there is nothing to confirm.{first} "
                               f"Fix: see the 'error' column of {spec.study_dir / 'trials.csv'}.")
    sign = -1.0 if spec.directions[0] == "maximize" else 1.0
    return min(front, key=lambda t: (sign * t.values[0], t.number))


def run_study(spec: TuneSpec, trials: int | None = None, workers: int = 1, storage: str | None = None,
              track: bool = True, show_progress: bool = False, prepared: Prepared | None = None,
              n_resamples: int = 10000, promote_result: bool = False, force: bool = False) -> TuneResult:
    """Run (or resume) the study to its budget, confirm the best config on the held-out split, write results."""
    prepared = prepared or prepare(spec)
    budget = trials if trials is not None else spec.trials
    url = storage_url(spec, storage)
    study = optimize(spec, prepared, url, budget, workers, show_progress)

    out = spec.study_dir
    out.mkdir(parents=True, exist_ok=True)
    table = report.trials_table(study, prepared.metrics, spec.tidy)
    table.to_csv(out / "trials.csv", index=False)
    states = {k: int(v) for k, v in table["state"].value_counts().sort_index().items()} if len(table) else {}
    best = best_trial(study, spec)
    pareto = report.pareto_table(study, prepared.metrics, spec.tidy)
    pareto.to_csv(out / "pareto.csv", index=False)

    best_params = spec.tidy(best.params)
    best_cfg = spec.config_for(best_params)
    conf = confirm(prepared, best_cfg, spec.base, seed=spec.seed, n_resamples=n_resamples)
    conf.per_query.to_csv(out / "confirmation_per_query.csv", index=False)
    summary: dict[str, Any] = {
        "study": spec.study_name, "dataset": spec.dataset, "storage": describe(url), "metric": conf.metric,
        "directions": spec.directions, "metrics": prepared.metrics, "trials": len(table), "states": states,
        "best_trial": best.number, "best_params": best_params, "tune_score": float(best.values[0]),
        "tune_values": dict(zip(prepared.metrics, map(float, best.values))),
        "heldout_score": conf.heldout_score, "baseline_heldout_score": conf.baseline_heldout_score,
        "p_value": conf.p_value, "heldout_n": conf.n, "tune_n": len(prepared.tune),
        "confirmation": confirmation_dict(conf), "config_hash": config_hash(best_cfg),
        "base_config_hash": config_hash(spec.base), "data_hash": prepared.objective.data_hash,
        "model_sha256": prepared.objective.model_sha256(best_cfg), "git_commit": git_commit(),
        "package_version": package_version(), "pareto": pareto.to_dict(orient="records"),
    }
    tuned_path = write_tuned(spec.tuned_path, best_cfg, summary)
    promotion = None
    if promote_result:
        promotion = promote(tuned_path, spec.promoted_path, summary, spec.directions[0], spec.confirm_test,
                            spec.alpha, force)
        summary["promotion"] = {"promoted": promotion.promoted, "forced": promotion.forced,
                                "path": str(promotion.path) if promotion.path else None, "reason": promotion.reason}
    artifacts = [out / "trials.csv", out / "pareto.csv", out / "confirmation_per_query.csv", tuned_path]
    for path in (report.plot_history(study, spec, prepared.metrics, out / "history.png"),
                 report.plot_importance(report.importances(study, spec.seed), spec, out / "importance.png"),
                 report.plot_pareto(study, prepared.metrics, spec, out / "pareto.png")):
        if path is not None:
            artifacts.append(path)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True, default=str), encoding="utf-8")

    result = TuneResult(spec.study_name, describe(url), best.number, best_params, float(best.values[0]),
                        conf.heldout_score, conf.baseline_heldout_score, conf.p_value, len(table), states,
                        conf.metric, pareto.to_dict(orient="records"), out, tuned_path, summary=summary,
                        promotion=promotion, confirmation=conf.per_query)
    if track:
        tags = {"git_commit": summary["git_commit"], "package_version": summary["package_version"],
                "data_hash": summary["data_hash"]}
        try:
            result.mlflow_run_id = report.log_study(study, spec, prepared, summary, artifacts + [out / "summary.json"],
                                                    tags)
        except TrackingError as exc:
            result.tracking_error = (f"{exc} The study itself is safe: its trials are in the Optuna storage "
                                     f"{describe(url)} and its results in {out}; run the same command again to log "
                                     "it once the tracking store is reachable.")
    summary["mlflow_run_id"] = result.mlflow_run_id
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True, default=str), encoding="utf-8")
    return result

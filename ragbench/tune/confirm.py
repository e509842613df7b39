"""Held-out confirmation: the best configuration found on the tuning split is evaluated on the held-out split next
to the base configuration, and the two are compared query by query with a paired test (``ragbench.eval.stats``:
the permutation test's p-value is the headline, the t-test and Wilcoxon p-values are kept alongside).

The tuned configuration is written as a loadable config YAML (``load_config`` reads it) whose header comment
carries the scores; the same numbers go to ``summary.json`` in the study folder.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from ..config import RagbenchConfig, config_hash, to_dict
from ..errors import DataError
from ..eval import stats
from .sweep import Prepared


@dataclass(frozen=True)
class Confirmation:
    metric: str
    n: int
    heldout_score: float
    baseline_heldout_score: float
    p_value: float                 # paired permutation test, two-sided
    t_p: float
    wilcoxon_p: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int
    means: dict[str, dict[str, float]] = field(default_factory=dict)   # system → metric → held-out mean
    per_query: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)


def confirm(prepared: Prepared, tuned: RagbenchConfig, base: RagbenchConfig, seed: int = 0,
            n_resamples: int = 10000) -> Confirmation:
    """Evaluate ``tuned`` and ``base`` on the held-out units and compare them on the primary metric."""
    metrics = prepared.metrics
    parts = []
    for system, cfg in (("tuned", tuned), ("base", base)):
        per = prepared.objective(cfg, prepared.heldout, metrics)
        parts.append(per.assign(system=system))
    per_query = pd.concat(parts, ignore_index=True)[["system", "qid", "measure", "value"]]
    primary = metrics[0]
    wide = per_query[per_query["measure"] == primary].pivot_table(index="qid", columns="system", values="value",
                                                                   aggfunc="first").dropna()
    if wide.empty or not {"tuned", "base"} <= set(wide.columns):
        raise DataError(f"held-out confirmation: no query has {primary} for both configurations.")
    c = stats.compare(wide["tuned"].to_numpy(), wide["base"].to_numpy(), seed=seed, n_resamples=n_resamples)
    means = {s: {m: float(g[g["measure"] == m]["value"].mean()) for m in metrics}
             for s, g in per_query.groupby("system")}
    return Confirmation(primary, c.n, c.mean_a, c.mean_b, c.permutation_p, c.t_p, c.wilcoxon_p, c.ci_low,
                        c.ci_high, c.wins, c.ties, c.losses, means, per_query)


def confirmation_dict(c: Confirmation) -> dict[str, Any]:
    d = asdict(c)
    d.pop("per_query", None)
    return d


def write_tuned(path: Path, cfg: RagbenchConfig, summary: dict[str, Any]) -> Path:
    """The tuned config as YAML with a header comment of the scores (atomic write)."""
    lines = [
        f"# Tuned by `ragbench tune` — study {summary['study']} ({summary['trials']} trials, best trial "
        f"#{summary['best_trial']}), dataset {summary['dataset']}",
        f"# {summary['metric']}: tuning {summary['tune_score']:.6g}; held-out tuned {summary['heldout_score']:.6g} "
        f"vs base {summary['baseline_heldout_score']:.6g} (paired permutation p = {summary['p_value']:.4g}, "
        f"n = {summary['heldout_n']})",
        "# best_params: " + json.dumps(summary["best_params"], sort_keys=True, default=str),
        f"# config_hash {config_hash(cfg)}, data_hash {summary.get('data_hash')}, git {summary.get('git_commit')}",
    ]
    text = "\n".join(lines) + "\n" + yaml.safe_dump(to_dict(cfg), sort_keys=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(path, text)
    return path


@dataclass(frozen=True)
class Promotion:
    """What ``--promote`` did: ``path`` of the promoted config (None when refused) and why."""

    promoted: bool
    path: Path | None
    reason: str
    forced: bool = False


def verdict(summary: dict[str, Any], direction: str, test: str = "permutation",
            alpha: float = 0.05) -> tuple[bool, str]:
    """(significant improvement?, the reason in words) of a study summary's held-out confirmation."""
    conf = summary["confirmation"]
    p = {"permutation": conf["p_value"], "t": conf["t_p"], "wilcoxon": conf["wilcoxon_p"]}[test]
    tuned, base, metric = summary["heldout_score"], summary["baseline_heldout_score"], summary["metric"]
    better = tuned > base if direction == "maximize" else tuned < base
    scores = f"held-out {metric} tuned {tuned:.4g} vs base {base:.4g}, {test} p = {p:.4g}, n = {conf['n']}"
    if not better:
        return False, f"{scores}: the tuned config is not better than the base"
    if not p < alpha:
        return False, f"{scores}: the improvement is not significant at alpha = {alpha}"
    return True, f"{scores} < alpha = {alpha}"


def promote(tuned_file: Path, target: Path, summary: dict[str, Any], direction: str, test: str = "permutation",
            alpha: float = 0.05, force: bool = False) -> Promotion:
    """Copy the tuned config to ``target`` (a tracked file) only when its held-out improvement is significant
    under ``test`` at ``alpha``; ``force`` overrides, and the header then says so and why it was not."""
    ok, reason = verdict(summary, direction, test, alpha)
    if not ok and not force:
        return Promotion(False, None, reason)
    note = (f"# Promoted by `ragbench tune --promote`: {reason}." if ok else
            f"# Promoted with --force although it failed the promotion test: {reason}.")
    text = note + "\n" + tuned_file.read_text(encoding="utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(target, text)
    return Promotion(True, target, reason, forced=not ok)


def _write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file of this process's own (several tune workers may finish the same study at
    once) and rename it into place, so readers see the old or the new file, never half of one."""
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a config file is for reading
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

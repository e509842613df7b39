"""Choose-on-some, report-on-the-rest: k-fold (or leave-one-group-out) selection of a configuration from a table
of per-query scores.

``scores`` is a DataFrame indexed by query id with one column per candidate configuration (per-query values of
one measure, higher is better). For every fold, the configuration with the best mean on the *other* folds is
chosen (ties: the earlier column, so list the simpler/default configuration first) and scored on the held-out
fold. The pooled held-out mean estimates what the selection procedure scores on queries it never saw; the
in-sample maximum is optimistic by construction.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np
import pandas as pd

from ..errors import ConfigError


def kfold_groups(ids: Sequence[Hashable], n_folds: int = 5, seed: int = 0) -> pd.Series:
    """``id → fold`` (0..n_folds−1): a seeded permutation cut into near-equal folds."""
    if n_folds < 2 or n_folds > len(ids):
        raise ConfigError(f"n_folds must be in [2, {len(ids)}], found {n_folds}.")
    order = np.random.default_rng(seed).permutation(len(ids))
    fold = np.empty(len(ids), dtype=np.int64)
    fold[order] = np.arange(len(ids)) % n_folds
    return pd.Series(fold, index=list(ids))


@dataclass(frozen=True)
class CvResult:
    """``per_fold``: fold, chosen configuration, its mean on the other folds (``fit``) and on the fold
    (``held_out``), the fold's size; ``held_out``: pooled mean over every held-out query."""

    per_fold: pd.DataFrame
    held_out: float
    in_sample_best: str
    in_sample_score: float

    def chosen(self) -> list[str]:
        return self.per_fold["chosen"].tolist()


def cross_validate(scores: pd.DataFrame, groups: pd.Series) -> CvResult:
    """Select on all folds but one, score on that one, for every fold (see the module notes)."""
    if scores.empty or scores.shape[1] == 0:
        raise ConfigError("cross_validate needs at least one configuration and one query.")
    g = groups.reindex(scores.index)
    if g.isna().any():
        raise ConfigError(f"{int(g.isna().sum())} queries have no fold. Fix: give every query id a group.")
    rows = []
    held: list[np.ndarray] = []
    for fold in sorted(g.unique(), key=str):
        inside = (g == fold).to_numpy()
        fit = scores[~inside].mean(axis=0)
        best = str(fit.index[int(np.argmax(fit.to_numpy()))])  # argmax keeps the first of equal means
        values = scores.loc[inside, best].to_numpy()
        held.append(values)
        rows.append({"fold": fold, "chosen": best, "fit": float(fit[best]), "held_out": float(values.mean()),
                     "queries": int(inside.sum())})
    means = scores.mean(axis=0)
    best_all = str(means.index[int(np.argmax(means.to_numpy()))])
    return CvResult(pd.DataFrame(rows), float(np.concatenate(held).mean()), best_all, float(means[best_all]))

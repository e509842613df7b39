"""Paired significance tests for per-query scores of two systems, multiple-testing corrections and seeded
bootstrap confidence intervals. All randomness comes from ``numpy.random.default_rng(seed)``, so the same seed
gives the same numbers in any process.

Conventions: ``a`` is the system under test, ``b`` the baseline, paired by query; differences are ``a − b``;
every test is two-sided. When all differences are zero the p-value is 1.0 (no evidence of a difference).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as sps

from ..errors import ConfigError, SchemaError

#: Up to this many non-zero pairs the permutation test enumerates all 2^n sign flips (exact p-value).
EXACT_LIMIT = 16


def _pair(a: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise SchemaError(f"paired test: expected two equal-length 1-D score lists, found {x.shape} and {y.shape}. "
                          "Fix: align the per-query scores by qid first.")
    if x.size == 0:
        raise SchemaError("paired test: no paired scores. Fix: evaluate at least one common query.")
    if np.isnan(x).any() or np.isnan(y).any():
        raise SchemaError("paired test: scores contain NaN. Fix: drop queries where the measure does not apply.")
    return x, y


def paired_ttest(a: ArrayLike, b: ArrayLike) -> float:
    """Two-sided paired t-test p-value (scipy ``ttest_rel``). Constant non-zero differences give 0.0."""
    x, y = _pair(a, b)
    d = x - y
    if np.all(d == 0):
        return 1.0
    if np.all(d == d[0]):
        return 0.0  # zero variance, non-zero mean: t is infinite
    if d.size < 2:
        return 1.0
    return float(sps.ttest_rel(x, y).pvalue)


def wilcoxon(a: ArrayLike, b: ArrayLike) -> float:
    """Two-sided Wilcoxon signed-rank p-value (scipy) of the differences rounded to 12 decimals.

    Zero differences are dropped (``zero_method="wilcox"``). The exact null distribution is used when at most 50
    non-zero differences remain and their magnitudes have no ties, else the normal approximation with tie
    correction (scipy's permutation fallback is far too slow for IR scores, which tie constantly)."""
    x, y = _pair(a, b)
    # Rounded so that differences equal up to float noise (0.55 − 0.60 vs 0.50 − 0.45) tie and zeros are zero.
    d = np.round(x - y, 12)
    nz = d[d != 0]
    if nz.size == 0:
        return 1.0
    exact = nz.size <= 50 and np.unique(np.abs(nz)).size == nz.size
    return float(sps.wilcoxon(nz, method="exact" if exact else "approx").pvalue)


def permutation_test(a: ArrayLike, b: ArrayLike, n_resamples: int = 10000, seed: int = 0) -> float:
    """Paired sign-flip permutation test on the mean difference, two-sided.

    Exact (all 2^n sign flips) when at most :data:`EXACT_LIMIT` differences are non-zero; otherwise Monte Carlo
    with ``n_resamples`` seeded flips and p = (1 + #{|mean*| ≥ |mean|}) / (1 + n_resamples)."""
    x, y = _pair(a, b)
    d = x - y
    nz = d[d != 0]
    if nz.size == 0:
        return 1.0
    observed = abs(d.mean())
    n = d.size
    tol = 1e-12 * max(1.0, observed)  # float sums of the same flips can differ in the last bit
    if nz.size <= EXACT_LIMIT:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=nz.size)))
        means = np.abs(signs @ nz) / n
        return float(np.mean(means >= observed - tol))
    rng = np.random.default_rng(seed)
    signs = rng.choice((-1.0, 1.0), size=(n_resamples, nz.size))
    means = np.abs(signs @ nz) / n
    return float((1 + np.sum(means >= observed - tol)) / (1 + n_resamples))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values: sort ascending, p'_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j))."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for i, idx in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[idx]))
        adjusted[idx] = running
    return adjusted.tolist()


def bonferroni(pvalues: Sequence[float]) -> list[float]:
    """Bonferroni adjusted p-values: min(1, m · p)."""
    m = len(pvalues)
    return [min(1.0, m * float(p)) for p in pvalues]


CORRECTIONS = {"holm": holm, "bonferroni": bonferroni}


def correct(pvalues: Sequence[float], method: str = "holm") -> list[float]:
    """Adjust a family of p-values with ``holm`` (default) or ``bonferroni``; NaN entries are left out of the
    family and stay NaN."""
    if method not in CORRECTIONS:
        raise ConfigError(f"unknown correction {method!r}; expected one of {sorted(CORRECTIONS)}.")
    vals = [float(p) for p in pvalues]
    keep = [i for i, p in enumerate(vals) if not math.isnan(p)]
    adjusted = CORRECTIONS[method]([vals[i] for i in keep]) if keep else []
    out = [math.nan] * len(vals)
    for i, v in zip(keep, adjusted):
        out[i] = v
    return out


def bootstrap_ci(values: Sequence[float], confidence: float = 0.95, n_resamples: int = 10000,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean (scipy ``bootstrap``, seeded generator)."""
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or v.size == 0 or np.isnan(v).any():
        raise SchemaError("bootstrap_ci: expected a non-empty 1-D list of numbers without NaN.")
    if not 0 < confidence < 1:
        raise ConfigError(f"bootstrap_ci: confidence must be in (0, 1), found {confidence}.")
    if np.all(v == v[0]):
        return float(v[0]), float(v[0])
    res = sps.bootstrap((v,), np.mean, confidence_level=confidence, n_resamples=n_resamples, method="percentile",
                        rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def win_tie_loss(a: ArrayLike, b: ArrayLike, tol: float = 1e-9) -> tuple[int, int, int]:
    """Queries where ``a`` beats, ties (|a − b| ≤ tol) and loses to ``b``."""
    x, y = _pair(a, b)
    d = x - y
    return int(np.sum(d > tol)), int(np.sum(np.abs(d) <= tol)), int(np.sum(d < -tol))


@dataclass(frozen=True)
class PairedComparison:
    """Everything the harness reports for one system × measure against the baseline."""

    n: int
    mean_a: float
    mean_b: float
    mean_diff: float
    t_p: float
    wilcoxon_p: float
    permutation_p: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int


def compare(a: ArrayLike, b: ArrayLike, seed: int = 0, n_resamples: int = 10000,
            confidence: float = 0.95) -> PairedComparison:
    """All paired statistics of ``a`` vs ``b``; the CI is a bootstrap interval of the mean difference."""
    x, y = _pair(a, b)
    d = x - y
    low, high = bootstrap_ci(d, confidence, n_resamples, seed)
    w, t, lo = win_tie_loss(x, y)
    return PairedComparison(int(d.size), float(x.mean()), float(y.mean()), float(d.mean()), paired_ttest(x, y),
                            wilcoxon(x, y), permutation_test(x, y, n_resamples, seed), low, high, w, t, lo)
